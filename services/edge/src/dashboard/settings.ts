/** Edge's dashboard settings (configuration: see the README). */
export interface DashboardSettings {
  /** `PUBLIC_BASE_URL`: the origin browsers use; invitation links and the Origin check. */
  publicBaseUrl?: string;
  /** `DASHBOARD_INSECURE_LOOPBACK_COOKIE`: development over http://127.0.0.1 (no `Secure`). */
  insecureLoopbackCookie: boolean;
  /** `DASHBOARD_SIGN_INS_IN_FLIGHT`: sign-ins and invitation acceptances at billing at once. */
  signInsInFlight?: number;
}

export const DEFAULT_SIGN_INS_IN_FLIGHT = 4;

export const DEFAULT_DASHBOARD_SETTINGS: DashboardSettings = {
  insecureLoopbackCookie: false,
};

/** Edge's dashboard settings (configuration: see the README). */
export interface DashboardSettings {
  /** `PUBLIC_BASE_URL`: the origin browsers use; invitation links and the Origin check. */
  publicBaseUrl?: string;
  /** `DASHBOARD_INSECURE_LOOPBACK_COOKIE`: development over http://127.0.0.1 (no `Secure`). */
  insecureLoopbackCookie: boolean;
  /** `DASHBOARD_SIGN_IN_FAILURES_PER_HOUR`: failed sign-ins per email. */
  signInFailuresPerHour: number;
}

export const DEFAULT_DASHBOARD_SETTINGS: DashboardSettings = {
  insecureLoopbackCookie: false,
  signInFailuresPerHour: 10,
};

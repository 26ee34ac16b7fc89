import type { BillingClient } from '@gateway/billing-client';
import type { DispatcherClient } from './clients/dispatcher-client.js';
import type { DashboardSettings } from './dashboard/settings.js';
import type { AuthFailureLimiter } from './http/auth.js';
import type { Idempotency } from './http/idempotency.js';
import type { InferenceJobs } from './jobs/inference-jobs.js';
import type { BackgroundResponses } from './responses/background-response.js';

/** What the dashboard and the operator API use (and the public API too). */
export interface ConsoleDeps {
  billing: BillingClient;
  /**
   * The dashboard's own client of billing (its own connections, `DASHBOARD_BILLING_CONNECTIONS`):
   * the bulkhead that keeps dashboard load, a sign-in flood included, off the public API's
   * connections. `billing` when omitted.
   */
  dashboardBilling?: BillingClient;
  dispatcher: DispatcherClient;
  limits: {
    jsonBodyBytes: number;
    uploadBytes: number;
    /** `PUBLIC_REQUESTS_MAX` and `PUBLIC_BODY_BYTES_MAX`; the defaults when omitted. */
    requestsInProgress?: number;
    bodyBytesInProgress?: number;
    /** Development: http:// webhook URLs accepted. */
    webhookAllowInsecure: boolean;
  };
  /** The operator API's token (`ADMIN_TOKEN`); only a process serving `admin` needs it. */
  adminToken: string;
  /** Failed authentications per client address (public and operator API). */
  authFailures: AuthFailureLimiter;
  /** The dashboard's settings; secure defaults when omitted. */
  dashboard?: DashboardSettings;
}

/** What only the public API uses: the job path (a bus) and Idempotency-Key claims. */
export interface InferenceDeps {
  jobs: InferenceJobs;
  idempotency: Idempotency;
  /** `/v1/responses` with `background`: the runs this process reads to their end. */
  background: BackgroundResponses;
}

/** What the routes use; built by the composition root (or a test). */
export type EdgeDeps = ConsoleDeps & InferenceDeps;

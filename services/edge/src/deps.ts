import type { BillingClient } from '@gateway/billing-client';
import type { DispatcherClient } from './clients/dispatcher-client.js';
import type { DashboardSettings } from './dashboard/settings.js';
import type { AuthFailureLimiter } from './http/auth-failures.js';
import type { Idempotency } from './http/idempotency.js';
import type { InferenceJobs } from './jobs/inference-jobs.js';

/** What the routes use; built by the composition root (or a test). */
export interface EdgeDeps {
  billing: BillingClient;
  /**
   * The dashboard's own client of billing (its own connections, `DASHBOARD_BILLING_CONNECTIONS`):
   * the bulkhead that keeps dashboard load, a sign-in flood included, off the public API's
   * connections. `billing` when omitted.
   */
  dashboardBilling?: BillingClient;
  dispatcher: DispatcherClient;
  jobs: InferenceJobs;
  idempotency: Idempotency;
  limits: {
    jsonBodyBytes: number;
    uploadBytes: number;
    /** Development: http:// webhook URLs accepted. */
    webhookAllowInsecure: boolean;
  };
  adminToken: string;
  /** Failed authentications per client address (public and operator API). */
  authFailures: AuthFailureLimiter;
  /** The dashboard's settings; secure defaults when omitted. */
  dashboard?: DashboardSettings;
}

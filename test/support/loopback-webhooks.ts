import type { TestCertificates } from '../../services/dispatcher/src/testing/test-ca.suite.js';

/**
 * Edge's and the dispatcher's settings for a webhook receiver on loopback whose certificate only
 * the test CA signs: both accept the loopback URL (the development setting), the dispatcher
 * trusts the CA and dispatches every 50 ms. `dispatcher`: more of its settings.
 */
export function loopbackWebhookEnv(
  certs: TestCertificates,
  dispatcher: Record<string, string> = {},
) {
  return {
    edgeEnv: { WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true' },
    dispatcherEnv: {
      DISPATCH_INTERVAL_MS: '50',
      WEBHOOK_ALLOW_INSECURE_LOOPBACK: 'true',
      WEBHOOK_CA_FILE: certs.caFile,
      ...dispatcher,
    },
  };
}

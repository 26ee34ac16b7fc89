import { listen, type RunningServer } from '@gateway/runtime';
import {
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import {
  TEST_INTERNAL_TOKEN,
  internalApiApp,
  startHarness,
  type Harness,
} from '../../../dispatcher/src/testing/harness.suite.js';
import { startReceiver, type Receiver } from '../../../dispatcher/src/testing/receiver.suite.js';
import {
  createTestCertificates,
  type TestCertificates,
} from '../../../dispatcher/src/testing/test-ca.suite.js';
import { TEST_DASHBOARD } from './dashboard.suite.js';
import { startEdge, type EdgeUnderTest } from './edge.suite.js';

/**
 * The dashboard's whole back end for a test: edge over the real billing and the real dispatcher
 * (in process, its own database, its internal API on a loopback port), which delivers to an
 * HTTPS receiver trusting the test CA. The dispatch loop is not started: a test runs it
 * (`dispatchOnce`).
 */
export interface DashboardStack {
  billing: BillingUnderTest;
  dispatcher: Harness;
  receiver: Receiver;
  edge: EdgeUnderTest;
  /** Runs the dispatch once and waits for its attempts. */
  dispatchOnce(): Promise<void>;
  close(): Promise<void>;
}

export async function startDashboardStack(): Promise<DashboardStack> {
  const billing = await startBilling({ entriesStableAfterMs: 0 });
  const certs: TestCertificates = createTestCertificates();
  const receiver = await startReceiver(certs);
  const dispatcher = await startHarness({ extraCaPem: certs.caPem });
  const dispatcherApi: RunningServer = await listen(internalApiApp(dispatcher), '127.0.0.1', 0);
  const edge = await startEdge(billing, {
    dispatcherUrl: `http://127.0.0.1:${dispatcherApi.port}`,
    dispatcherToken: TEST_INTERNAL_TOKEN,
    dashboard: TEST_DASHBOARD,
  });
  return {
    billing,
    dispatcher,
    receiver,
    edge,
    dispatchOnce: async () => {
      await dispatcher.dispatcher.loop.tick();
      await dispatcher.dispatcher.loop.idle();
    },
    close: async () => {
      await edge.close();
      await dispatcherApi.close(1_000);
      await dispatcher.close();
      await receiver.close();
      certs.remove();
      await billing.close();
    },
  };
}

import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  DISPATCHER_API_PREFIX,
  DISPATCHER_ROUTES as R,
  type Route,
  type RouteAnswer,
  type RouteInput,
} from '@gateway/contracts';
import { INTERNAL_TOKEN_HEADER } from '@gateway/runtime';
// The agreement checks are billing's first; shared here rather than written twice.
import {
  RouteAgreement,
  routeRequest,
} from '../../../../packages/testing/src/route-agreement.suite.js';
import { startReceiver, type Receiver } from '../testing/receiver.suite.js';
import { createTestCertificates, type TestCertificates } from '../testing/test-ca.suite.js';
import {
  TEST_INTERNAL_TOKEN,
  completedEvent,
  internalApiApp,
  startHarness,
  type Harness,
} from '../testing/harness.suite.js';

/*
 * The dispatcher's contract (`DISPATCHER_ROUTES`) agrees with what it serves: every route is
 * called here as edge calls it, answers with the route's status, and its answer passes the
 * route's answer schema. A route added to the table without a call here fails the last test.
 */

let certs: TestCertificates;
let receiver: Receiver;
let harness: Harness;
let api: ReturnType<typeof request>;
const agreement = new RouteAgreement();

beforeAll(async () => {
  certs = createTestCertificates();
  receiver = await startReceiver(certs);
  harness = await startHarness({ extraCaPem: certs.caPem });
  api = request(internalApiApp(harness));
});

afterAll(async () => {
  await harness?.close();
  await receiver?.close();
  certs?.remove();
});

/** Calls one route with edge's credential; checks its status and its answer's schema. */
async function call<Called extends Route>(
  route: Called,
  input: RouteInput<Called>,
): Promise<RouteAnswer<Called>> {
  const sent = routeRequest(api, DISPATCHER_API_PREFIX, route, input);
  return agreement.answerOf(route, sent.set(INTERNAL_TOKEN_HEADER, TEST_INTERNAL_TOKEN));
}

/** Runs the dispatch once and waits for its attempts (the loop is not started here). */
async function dispatchOnce(): Promise<void> {
  await harness.dispatcher.loop.tick();
  await harness.dispatcher.loop.idle();
}

describe("the dispatcher's contract, against the dispatcher", () => {
  it('serves signing secrets', async () => {
    const account = { accountId: 'usr_contract' };
    await call(R.listSecrets, { params: account });
    await call(R.rotateSecret, { params: account });
    const expired = await call(R.expirePreviousSecret, { params: account });
    expect(expired.expired).toBe(1);
  });

  it('serves deliveries and redelivery, with attempts', async () => {
    const accountId = 'usr_contract';
    const event = completedEvent(receiver.url('/contract'), { accountId });
    const { deliveryId } = await harness.dispatcher.intake.accept(event);
    await dispatchOnce();
    const page = await call(R.listDeliveries, {
      params: { accountId },
      query: new URLSearchParams({ limit: '5' }),
    });
    expect(page.deliveries.map((delivery) => delivery.attempts.length)).toEqual([1]);
    await call(R.redeliver, { params: { deliveryId } });
    await dispatchOnce();
    await call(R.redeliverOwn, { params: { accountId, deliveryId } });
  });

  it('has called every route of the table', () => {
    expect(agreement.missed(Object.values(R))).toEqual([]);
  });
});

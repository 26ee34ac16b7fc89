import { beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { Receipt } from '@gateway/contracts';
import { bearer } from '../../services/edge/src/testing/edge.suite.js';
import { useRealStack } from '../../services/edge/src/testing/real-stack.suite.js';
import { clientToken, nowS } from '../../services/edge/src/testing/tokens.suite.js';
import { fundAccount, type FundedAccount } from '@gateway/testing';

/**
 * Receipts reconcile, end to end: edge → RabbitMQ → the real worker → a
 * stand-in node, with the real billing. For every request of the run (two models, streamed and
 * not, one refunded, one stream the client cancelled, one failed): the receipt's cost = the usage
 * record's net cost = the settlement's ledger amount − the refund's; what the client was told
 * (`_service`, the final chunk's `usage.cost_dzd`) is what the receipt says was settled.
 */

const MODEL = 'acme/receipt-chat';
const OTHER_MODEL = 'acme/receipt-chat-b';
const stack = useRealStack(
  {
    [MODEL]: {
      kind: 'chat',
      input_price_dzd_per_m: 1_000,
      output_price_dzd_per_m: 2_000,
      max_output_tokens: 256,
    },
    [OTHER_MODEL]: {
      kind: 'chat',
      input_price_dzd_per_m: 3_000,
      output_price_dzd_per_m: 5_000,
      max_output_tokens: 256,
    },
  },
  { answerTokensMin: 5, answerTokensMax: 8 },
);
const messages = [{ role: 'user' as const, content: 'Say something short.' }];

/** Billing's database, read directly (one short connection). */
async function query<T extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<T[]> {
  const db = new pg.Client({ connectionString: stack.billing.databaseUrl });
  await db.connect();
  try {
    return (await db.query<T>(text, values)).rows;
  } finally {
    await db.end();
  }
}

/** The ledger's own figures for one hold: what its settlement charged, what a refund gave back. */
async function ledgerOf(holdId: string) {
  const [row] = await query<{ charged: string; refunded: string; settlement: string | null }>(
    `SELECT COALESCE(-SUM(e.amount_micro_dzd) FILTER (WHERE t.kind = 'hold_settlement'), 0)::text
              AS charged,
            COALESCE(SUM(e.amount_micro_dzd) FILTER (WHERE t.kind = 'reversal'), 0)::text
              AS refunded,
            max(t.id) FILTER (WHERE t.kind = 'hold_settlement') AS settlement
       FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
      WHERE e.account_id IS NOT NULL
        AND (t.hold_id = $1 OR t.reference LIKE 'refund of hold ' || $1 || ' (%')`,
    [holdId],
  );
  return {
    charged: BigInt(row!.charged),
    refunded: BigInt(row!.refunded),
    settlement: row!.settlement,
  };
}

async function recordOf(holdId: string) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const [row] = await query<{ cost: string; refunded: string; outcome: string }>(
      `SELECT cost_micro_dzd::text AS cost, refunded_micro_dzd::text AS refunded, outcome
         FROM usage_records WHERE hold_id = $1`,
      [holdId],
    );
    if (row || Date.now() > deadline) return row;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const receipt = (credential: string, id: string) =>
  stack.edge.api.get(`/v1/requests/${encodeURIComponent(id)}`).set(bearer(credential));

interface Sent {
  requestId: string;
  /** What the client was told it cost: `_service.cost_dzd` or the final chunk's `usage.cost_dzd`. */
  toldDzd: number | null;
  holdId?: string;
}

describe('receipts reconcile', () => {
  let tenant: FundedAccount;
  let other: FundedAccount;
  const sent: Sent[] = [];

  /** A plain request: `_service` names its hold and cost. */
  async function plain(model: string): Promise<Sent> {
    const { data, response } = await stack
      .client(tenant.apiKey)
      .chat.completions.create({ model, messages })
      .withResponse();
    const service = (data as unknown as { _service: { cost_dzd: number; hold_id: string } })
      ._service;
    return {
      requestId: response.headers.get('x-request-id')!,
      toldDzd: service.cost_dzd,
      holdId: service.hold_id,
    };
  }

  /** A stream read to its end: the final chunk's usage carries the cost. */
  async function streamed(model: string): Promise<Sent> {
    const { data: stream, response } = await stack
      .client(tenant.apiKey)
      .chat.completions.create({ model, messages, stream: true })
      .withResponse();
    let cost: number | null = null;
    for await (const chunk of stream) {
      const usage = chunk.usage as { cost_dzd?: number } | null | undefined;
      if (usage?.cost_dzd !== undefined) cost = usage.cost_dzd;
    }
    expect(cost).not.toBeNull();
    return { requestId: response.headers.get('x-request-id')!, toldDzd: cost };
  }

  /** A stream the client leaves after a few chunks: it pays for what was relayed. */
  async function cancelled(): Promise<Sent> {
    stack.node.setOptions({ tokensPerSecond: 20, answerTokensMin: 200, answerTokensMax: 200 });
    try {
      const controller = new AbortController();
      const { data: stream, response } = await stack
        .client(tenant.apiKey)
        .chat.completions.create(
          { model: MODEL, messages, stream: true },
          { signal: controller.signal },
        )
        .withResponse();
      let chunks = 0;
      try {
        for await (const chunk of stream) {
          if (chunk.choices.length > 0 && (chunks += 1) >= 5) controller.abort();
        }
      } catch {
        // The SDK may end the iteration with an abort error or quietly.
      }
      return { requestId: response.headers.get('x-request-id')!, toldDzd: null };
    } finally {
      stack.node.setOptions({ tokensPerSecond: 500, answerTokensMin: 5, answerTokensMax: 8 });
    }
  }

  beforeAll(async () => {
    tenant = await fundAccount(stack.billing.operator);
    other = await fundAccount(stack.billing.operator);
    sent.push(await plain(MODEL), await plain(OTHER_MODEL));
    sent.push(await streamed(MODEL), await streamed(OTHER_MODEL));
    // Refunded as edge refunds an answer it could not deliver (billing's refund path).
    const lost = await plain(OTHER_MODEL);
    await stack.billing.call('POST', `/holds/${lost.holdId}/refund`);
    sent.push(lost, await cancelled());
    stack.node.setFault({ kind: 'status', status: 503 });
    try {
      const failed = await stack.edge.api
        .post('/v1/chat/completions')
        .set(bearer(tenant.apiKey))
        .send({ model: MODEL, messages });
      expect(failed.status).toBe(500);
      sent.push({ requestId: failed.headers['x-request-id'] as string, toldDzd: null });
    } finally {
      stack.node.clearFault();
    }
  }, 60_000);

  it('for every request: receipt cost = usage record cost = settled ledger amount − refunds', async () => {
    const statuses: string[] = [];
    for (const request of sent) {
      const answer = await receipt(tenant.apiKey, request.requestId);
      expect(answer.status).toBe(200);
      const body = answer.body as Receipt;
      const record = await recordOf(body.hold_id);
      const ledger = await ledgerOf(body.hold_id);
      const net = BigInt(body.net_micro_dzd);
      expect({ request: request.requestId, net }).toEqual({
        request: request.requestId,
        net: ledger.charged - ledger.refunded,
      });
      expect(net).toBe(BigInt(record!.cost) - BigInt(record!.refunded));
      expect(BigInt(body.settled_micro_dzd!)).toBe(ledger.charged);
      expect(BigInt(body.refunded_micro_dzd)).toBe(ledger.refunded);
      expect(body.ledger.settlement_transaction_id).toBe(ledger.settlement);
      expect(body.request_id).toBe(request.requestId);
      if (request.holdId !== undefined) expect(body.hold_id).toBe(request.holdId);
      // What the client was told is what was settled (to the µDZD).
      if (request.toldDzd !== null) expect(request.toldDzd).toBe(body.settled_dzd);
      statuses.push(
        `${body.model} ${body.status} ${body.refunded_micro_dzd === '0' ? '' : 'refunded'}`.trim(),
      );
    }
    expect(statuses).toEqual([
      `${MODEL} succeeded`,
      `${OTHER_MODEL} succeeded`,
      `${MODEL} succeeded`,
      `${OTHER_MODEL} succeeded`,
      `${OTHER_MODEL} succeeded refunded`,
      `${MODEL} cancelled`,
      `${MODEL} failed`,
    ]);
    const refunded = (await receipt(tenant.apiKey, sent[4]!.requestId)).body as Receipt;
    expect(refunded.net_micro_dzd).toBe('0');
    expect(BigInt(refunded.refunded_micro_dzd)).toBeGreaterThan(0n);
    expect(refunded.ledger.refund_entry_ids).toHaveLength(2);
    const check = await stack.edge.api
      .get('/admin/v1/ledger/check')
      .set(bearer(stack.edge.adminToken));
    expect(check.body).toEqual({ ok: true, violations: [] });
  });

  it('finds a request by its job id as by its X-Request-Id; the operator API by account', async () => {
    const byRequest = await receipt(tenant.apiKey, sent[0]!.requestId);
    const byJob = await receipt(tenant.apiKey, sent[0]!.holdId!);
    expect(byJob.body).toEqual(byRequest.body);
    expect(byJob.body.job_id).toMatch(/^chatcmpl-/);
    const operator = await stack.edge.api
      .get(`/admin/v1/accounts/${tenant.accountId}/requests/${sent[0]!.requestId}`)
      .set(bearer(stack.edge.adminToken));
    expect(operator.status).toBe(200);
    expect(operator.body).toEqual({ ...byRequest.body, account_id: tenant.accountId });
  });

  it('usage sums report the net cost and the refunds', async () => {
    const answer = await stack.edge.api.get('/v1/usage?group_by=model').set(bearer(tenant.apiKey));
    const byModel = new Map(
      (answer.body.data as { model: string; cost_dzd: number; refunded_dzd: number }[]).map((g) => [
        g.model,
        g,
      ]),
    );
    const receipts = await Promise.all(
      sent.map(async (s) => (await receipt(tenant.apiKey, s.requestId)).body as Receipt),
    );
    for (const model of [MODEL, OTHER_MODEL]) {
      const mine = receipts.filter((r) => r.model === model);
      const net = mine.reduce((sum, r) => sum + BigInt(r.net_micro_dzd), 0n);
      const refunded = mine.reduce((sum, r) => sum + BigInt(r.refunded_micro_dzd), 0n);
      expect(byModel.get(model)).toMatchObject({
        cost_dzd: Number(net) / 1e6,
        refunded_dzd: Number(refunded) / 1e6,
      });
    }
  });

  it("is 404 for an unknown id and another account's; a scoped token is refused", async () => {
    for (const [credential, id] of [
      [other.apiKey, sent[0]!.requestId],
      [other.apiKey, sent[0]!.holdId!],
      [tenant.apiKey, 'no-such-request'],
    ] as const) {
      const answer = await receipt(credential, id);
      expect({ id, status: answer.status, code: answer.body.error?.code }).toEqual({
        id,
        status: 404,
        code: 'resource_not_found',
      });
    }
    const token = clientToken(tenant, { exp: nowS() + 600 });
    const refused = await receipt(token, sent[0]!.requestId);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ code: 'invalid_api_key' });
  });
});

import { afterAll, beforeAll } from '@jest/globals';
import { createStandInModelNode, type StandInModelNode } from '@gateway/stand-ins';
import { fundAccount, uniquePrefix, type FundedAccount } from '@gateway/testing';
import {
  admitHold,
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { JobClient, startWorker, type WorkerOptions } from './worker-harness.suite.js';

/** Prices of the test catalog: cost in µDZD = 10 × input tokens + 30 × output tokens. */
export const PRICES = { input_price_dzd_per_m: 10, output_price_dzd_per_m: 30 } as const;
export const expectedCost = (usage: { promptTokens: number; completionTokens: number }): bigint =>
  BigInt(usage.promptTokens * 10 + usage.completionTokens * 30);

export interface WorkerFixture {
  billing: BillingUnderTest;
  node: StandInModelNode;
  client: JobClient;
  prefix: string;
  /** The worker's direct job API, when the fixture was asked for it (`direct`). */
  directUrl: string | undefined;
  account: FundedAccount;
  putModel(id: string, body: Record<string, unknown>): Promise<void>;
  hold(
    model: string,
    options?: { inputTokens?: number; maxOutputTokens?: number; priority?: boolean },
  ): Promise<string>;
}

/**
 * Real billing (PostgreSQL), real RabbitMQ, the worker's real consumers and a stand-in model
 * node, set up once per test file; `client` plays edge's side of the job protocol.
 */
export function useWorkerFixture(
  options: WorkerOptions & {
    creditDzd?: number;
    /** The worker's ledger URL, from the billing started (ADR 0070); unset: billing's API. */
    ledger?: (billing: BillingUnderTest) => string;
  } = {},
): WorkerFixture {
  const fixture = {} as WorkerFixture;
  let stopWorker: () => Promise<void>;
  beforeAll(async () => {
    fixture.prefix = uniquePrefix('worker');
    fixture.billing = await startBilling();
    fixture.node = await createStandInModelNode({ tokensPerSecond: 0, firstTokenLatencyMs: 0 });
    fixture.client = await JobClient.start(fixture.prefix);
    const ledgerUrl = options.ledger?.(fixture.billing);
    const worker = await startWorker(fixture.billing, fixture.prefix, {
      ...options,
      ...(ledgerUrl === undefined ? {} : { ledgerUrl }),
    });
    stopWorker = worker.stop;
    fixture.directUrl = worker.directUrl;
    fixture.account = await fundAccount(fixture.billing.operator, {
      creditDzd: options.creditDzd ?? 1_000,
    });
    fixture.putModel = async (id, body) => {
      await fixture.billing.call('PUT', `/admin/models/${id}`, { ...PRICES, ...body });
    };
    fixture.hold = async (model, hold = {}) =>
      (
        await admitHold(
          fixture.billing,
          fixture.account,
          model,
          { inputTokens: hold.inputTokens ?? 100, maxOutputTokens: hold.maxOutputTokens ?? null },
          hold.priority ?? false,
        )
      ).holdId;
  });
  afterAll(async () => {
    await stopWorker?.();
    await fixture.client?.close();
    await fixture.node?.close();
    await fixture.billing?.close();
  });
  return fixture;
}

export const chatModel = (nodes: string[], maxOutputTokens = 4096) => ({
  kind: 'chat',
  provider: 'node',
  protocol: 'openai',
  upstream_model: 'stand-in-model',
  max_output_tokens: maxOutputTokens,
  nodes: nodes.map((url) => ({ url })),
});

/** Typed views of reply data (the protocol carries it as open JSON). */
export interface ChoiceView {
  message?: { content: string };
  delta?: { content?: string };
  finish_reason?: string | null;
}
export const choicesOf = (data: unknown): ChoiceView[] =>
  (data as { choices?: ChoiceView[] } | undefined)?.choices ?? [];
export const contentOf = (data: unknown): string => choicesOf(data)[0]?.message?.content ?? '';
export const finishOf = (data: unknown) => choicesOf(data)[0]?.finish_reason;
export const streamedText = (chunks: { data?: unknown }[]): string =>
  chunks.map((chunk) => choicesOf(chunk.data)[0]?.delta?.content ?? '').join('');

import path from 'node:path';
import { afterAll, beforeAll } from '@jest/globals';
import OpenAI from 'openai';
import { listen, type RunningServer } from '@gateway/runtime';
import {
  createStandInModelNode,
  type StandInModelNode,
  type StandInModelNodeOptions,
} from '@gateway/stand-ins';
import {
  fundAccount,
  spawnService,
  testAmqpUrl,
  waitForStatus,
  type FundedAccount,
  type ServiceProcess,
} from '@gateway/testing';
import {
  startBilling,
  type BillingUnderTest,
} from '../../../billing/src/testing/billing-under-test.suite.js';
import { startEdge, type EdgeUnderTest } from './edge.suite.js';

/**
 * Edge (in process, on a loopback port) → RabbitMQ → the real inference worker (built, as a
 * process) → a stand-in model node, with the real billing settling every request. What the
 * `openai` SDK tests talk to.
 */
export interface RealStack {
  billing: BillingUnderTest;
  edge: EdgeUnderTest;
  node: StandInModelNode;
  /** `http://127.0.0.1:<port>` of edge. */
  baseUrl: string;
  /** A funded account with an API key, made once per file. */
  tenant: FundedAccount;
  /** The official SDK pointed at the gateway, no retries (tests see every failure). */
  client(apiKey: string): OpenAI;
}

/** Catalog entries to create on the stand-in node: id → body of `PUT /admin/models/{id}`. */
export type StackModels = Record<string, Record<string, unknown>>;

/** A catalog entry of `kind`, priced 1,000 DZD per million input and 2,000 per million output. */
export const pricedModel = (kind: string) => ({
  kind,
  input_price_dzd_per_m: 1_000,
  output_price_dzd_per_m: 2_000,
  max_output_tokens: 256,
});

/** One model of each media kind. */
export const MEDIA_MODELS: StackModels = {
  'acme/embed': pricedModel('embedding'),
  'acme/paint': pricedModel('image'),
  'acme/voice': pricedModel('speech'),
  'acme/ear': pricedModel('transcription'),
  'acme/film': pricedModel('video'),
  'acme/rank': pricedModel('rerank'),
};

export function useRealStack(
  models: StackModels,
  nodeOptions: StandInModelNodeOptions = {},
): RealStack {
  const stack = {} as RealStack;
  let server: RunningServer;
  let worker: ServiceProcess;
  beforeAll(async () => {
    stack.billing = await startBilling();
    stack.edge = await startEdge(stack.billing, { replyTimeoutMs: 20_000 });
    server = await listen(stack.edge.app, '127.0.0.1', 0);
    stack.baseUrl = `http://127.0.0.1:${server.port}`;
    stack.node = await createStandInModelNode(nodeOptions);
    for (const [id, body] of Object.entries(models)) {
      await stack.billing.call('PUT', `/admin/models/${id}`, {
        provider: 'node',
        upstream_model: 'stand-in-model',
        ...body,
        nodes: [{ url: stack.node.url }],
      });
    }
    worker = await spawnService({
      entry: path.resolve('services', 'inference-worker', 'dist', 'main.js'),
      env: {
        AMQP_URL: testAmqpUrl(),
        AMQP_PREFIX: stack.edge.prefix,
        BILLING_URL: stack.billing.url,
        BILLING_INTERNAL_TOKEN: stack.billing.workerToken,
      },
    });
    await waitForStatus(`${worker.baseUrl}/readyz`, 200);
    stack.tenant = await fundAccount(stack.billing.operator);
    stack.client = (apiKey) =>
      new OpenAI({ apiKey, baseURL: `${stack.baseUrl}/v1`, maxRetries: 0 });
  }, 60_000);

  afterAll(async () => {
    await worker?.stop('SIGTERM');
    await stack.node?.close();
    await server?.close(1_000);
    await stack.edge?.close();
    await stack.billing?.close();
  });
  return stack;
}

import { randomUUID } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import {
  STAND_IN_PRICES,
  startAbuseStack,
  type AbuseStack,
  type RawAnswer,
} from '../abuse/abuse-stack.js';
import { fundAccount } from '@gateway/testing';

/*
 * The deployed shape (billing, dispatcher, inference worker and edge as four processes over real
 * PostgreSQL and RabbitMQ, a stand-in model node behind them: test/abuse/abuse-stack.ts), set up
 * for the client-library suites: a catalog with a text-only chat model, a vision chat model and
 * an embedding model, and accounts for the error cases. The money checks read billing's database.
 */

export const MODELS = {
  /** Chat, text only (the catalog's default `input_modalities`). */
  chat: 'clients/chat',
  /** Chat with the `image` input modality. */
  vision: 'clients/vision',
  embedding: 'clients/embed',
} as const;

/** What a catalog model may answer at most; room for a tool call's JSON or a structured object. */
const MAX_OUTPUT_TOKENS = 512;

export interface Account {
  accountId: string;
  apiKey: string;
}

export interface ClientStack {
  stack: AbuseStack;
  /** `http://127.0.0.1:<edge port>/v1`: what the clients get as their base URL. */
  baseURL: string;
  /** Funded; every successful case spends from it. */
  funded: Account;
  /** Credited 1 µDZD: every inference request is refused with 402 before any hold. */
  broke: Account;
  /** Funded, but allowed one request per minute (429 with Retry-After once spent). */
  limited: Account;
  /** A well-formed key that belongs to nobody (401). */
  unknownKey: string;
  /**
   * Why the vision model could not be put in the catalog (`PUT /admin/v1/models/{id}` with
   * `input_modalities`), or null when it was: the image cases fail with this instead.
   */
  visionSetupError: string | null;
  /** A fresh request id (`X-Request-Id`): edge keeps it on the hold and its usage record. */
  requestId(label: string): string;
  /**
   * The usage records of every request sent with `requestId` (a multi-step run sends several),
   * once at least `count` exist (settlement follows the answer by a few milliseconds).
   */
  usageOf(requestId: string, count?: number): Promise<UsageTotals>;
  /**
   * Spends the limited account's request of the current minute (plain HTTP), so the next request
   * of that account is refused with 429; returns the refusal it saw.
   */
  exhaustRateLimit(): Promise<RawAnswer>;
  /** The chat request bodies the stand-in model node received, oldest first. */
  nodeChatBodies(): NodeChatBody[];
  /** Every money rule broken by the suite's requests (empty when all is well). */
  moneyViolations(options?: { cancelled?: string[] }): Promise<string[]>;
  close(): Promise<void>;
}

/** A chat completion request as the model node read it. */
export type NodeChatBody = Record<string, unknown> & {
  messages: { role: string; content: unknown }[];
};

export interface UsageTotals {
  records: number;
  promptTokens: number;
  completionTokens: number;
  costMicroDzd: bigint;
}

async function putModel(stack: AbuseStack, id: string, body: Record<string, unknown>) {
  const answer = await stack.admin('PUT', `/models/${id}`, {
    provider: 'node',
    upstream_model: 'stand-in',
    nodes: [{ url: stack.node.url }],
    max_output_tokens: MAX_OUTPUT_TOKENS,
    input_price_dzd_per_m: STAND_IN_PRICES.input,
    output_price_dzd_per_m: STAND_IN_PRICES.output,
    ...body,
  });
  return answer.status === 200
    ? null
    : `PUT /admin/v1/models/${id}: ${answer.status} ${answer.body}`;
}

export async function startClientStack(suite: string): Promise<ClientStack> {
  const stack = await startAbuseStack();
  // Short answers, quickly: a few seconds per case on a 2-core machine.
  stack.node.setOptions({ firstTokenLatencyMs: 5, tokensPerSecond: 0 });
  for (const [id, body] of [
    [MODELS.chat, { kind: 'chat' }],
    [MODELS.embedding, { kind: 'embedding' }],
  ] as const) {
    const error = await putModel(stack, id, body);
    if (error !== null) throw new Error(error);
  }
  const visionSetupError = await putModel(stack, MODELS.vision, {
    kind: 'chat',
    input_modalities: ['text', 'image'],
  });
  const account = (name: string, creditDzd: number, rateLimitPerMinute?: number) =>
    fundAccount(stack.operator, {
      name: `${suite} ${name}`,
      keyName: name,
      creditDzd,
      credit: { reference: `${suite} client suite`, idempotencyKey: `${suite}-${name}-credit` },
      ...(rateLimitPerMinute === undefined ? {} : { rateLimitPerMinute }),
    });
  const funded = await account('funded', 1_000);
  const broke = await account('broke', 0.000001);
  const limited = await account('limited', 1_000, 1);
  const accountIds = [funded.accountId, broke.accountId, limited.accountId];

  const usageOf = async (requestId: string, count = 1): Promise<UsageTotals> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const rows = await stack.billingQuery<{
        prompt_tokens: string;
        completion_tokens: string;
        cost_micro_dzd: string;
      }>(
        'SELECT prompt_tokens, completion_tokens, cost_micro_dzd FROM usage_records WHERE request_id = $1',
        [requestId],
      );
      if (rows.length >= count || Date.now() > deadline) {
        return {
          records: rows.length,
          promptTokens: rows.reduce((sum, row) => sum + Number(row.prompt_tokens), 0),
          completionTokens: rows.reduce((sum, row) => sum + Number(row.completion_tokens), 0),
          costMicroDzd: rows.reduce((sum, row) => sum + BigInt(row.cost_micro_dzd), 0n),
        };
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const exhaustRateLimit = async (): Promise<RawAnswer> => {
    const body = JSON.stringify({
      model: MODELS.chat,
      messages: [{ role: 'user', content: 'spend the minute' }],
      max_tokens: 1,
    });
    for (let attempt = 0; attempt < 6; attempt += 1) {
      const answer = await stack.send({
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { Authorization: `Bearer ${limited.apiKey}`, 'Content-Type': 'application/json' },
        body,
      });
      if (answer.status === 429) {
        // A refusal at the very end of a window would not hold for the client's request.
        const retryAfterS = Number(answer.headers['retry-after']);
        if (retryAfterS > 2) return answer;
        await new Promise((resolve) => setTimeout(resolve, retryAfterS * 1_000 + 100));
      } else if (answer.status !== 200) {
        throw new Error(`rate-limit set-up: ${answer.status} ${answer.body}`);
      }
    }
    throw new Error('rate-limit set-up: the limited account was never refused');
  };

  return {
    stack,
    baseURL: `${stack.edgeUrl}/v1`,
    funded,
    broke,
    limited,
    unknownKey: `sk_live_${'C'.repeat(43)}`,
    visionSetupError,
    requestId: (label) => `clients-${suite}-${label}-${randomUUID()}`.slice(0, 128),
    usageOf,
    exhaustRateLimit,
    nodeChatBodies: () =>
      stack.node
        .requests()
        .filter((request) => request.path === '/v1/chat/completions')
        .map((request) => request.body as NodeChatBody),
    moneyViolations: (options) => moneyViolations(stack, accountIds, options?.cancelled ?? []),
    close: () => stack.close(),
  };
}

interface HoldRow extends Record<string, unknown> {
  id: string;
  status: string;
  model: string;
  amount_micro_dzd: string;
  settled_amount_micro_dzd: string | null;
  uncapped_cost_micro_dzd: string | null;
  input_price_micro_dzd_per_m: string | null;
  output_price_micro_dzd_per_m: string | null;
  priority: boolean;
  refunded: boolean;
  request_id: string | null;
  outcome: string | null;
  prompt_tokens: string | null;
  completion_tokens: string | null;
  cost_micro_dzd: string | null;
}

/** ceil((in × in_price + out × out_price) × tier / 10^6) µDZD: `ledger_cost_micro_dzd`. */
export function costMicroDzd(
  promptTokens: bigint,
  completionTokens: bigint,
  inputPrice: bigint,
  outputPrice: bigint,
  priority: boolean,
): bigint {
  const [numerator, denominator] = priority ? [12n, 10_000_000n] : [1n, 1_000_000n];
  const scaled = (promptTokens * inputPrice + completionTokens * outputPrice) * numerator;
  return (scaled + denominator - 1n) / denominator;
}

/**
 * Every hold of the suite's accounts ended (none pending), was settled (every case that reached
 * admission is one the gateway should answer), charged exactly its usage at the prices snapshot at
 * admission and never above the hold, with a usage record agreeing; the ledger's check is clean.
 * `cancelled`: holds of requests the suite cancelled, whose usage record says so.
 */
async function moneyViolations(
  stack: AbuseStack,
  accountIds: string[],
  cancelled: readonly string[],
): Promise<string[]> {
  const rows = await stack.billingQuery<HoldRow>(
    `SELECT h.id, h.status::text AS status, h.model, h.amount_micro_dzd,
            h.settled_amount_micro_dzd, h.uncapped_cost_micro_dzd,
            h.input_price_micro_dzd_per_m, h.output_price_micro_dzd_per_m, h.priority,
            h.refunded_at IS NOT NULL AS refunded, h.request_id,
            u.outcome, u.prompt_tokens, u.completion_tokens, u.cost_micro_dzd
       FROM holds h LEFT JOIN usage_records u ON u.hold_id = h.id
      WHERE h.account_id = ANY($1) ORDER BY h.created_at`,
    [accountIds],
  );
  const violations: string[] = [];
  for (const row of rows) {
    const where = `hold ${row.id} (${row.model}, request ${row.request_id})`;
    if (row.status !== 'settled') {
      violations.push(`${where}: ${row.status} (usage outcome ${row.outcome}), not settled`);
      continue;
    }
    if (row.outcome === null || row.prompt_tokens === null || row.completion_tokens === null) {
      violations.push(`${where}: settled without a usage record`);
      continue;
    }
    const expected = costMicroDzd(
      BigInt(row.prompt_tokens),
      BigInt(row.completion_tokens),
      BigInt(row.input_price_micro_dzd_per_m ?? -1),
      BigInt(row.output_price_micro_dzd_per_m ?? -1),
      row.priority,
    );
    const settled = BigInt(row.settled_amount_micro_dzd ?? -1);
    const usage = `${row.prompt_tokens} in + ${row.completion_tokens} out`;
    if (settled !== expected) {
      violations.push(`${where}: charged ${settled} µDZD, usage ${usage} costs ${expected}`);
    }
    if (settled > BigInt(row.amount_micro_dzd) || row.uncapped_cost_micro_dzd !== null) {
      violations.push(
        `${where}: usage ${usage} (uncapped ${row.uncapped_cost_micro_dzd}) above the hold ` +
          `of ${row.amount_micro_dzd} µDZD`,
      );
    }
    const outcome = cancelled.includes(row.id) ? 'cancelled' : 'succeeded';
    if (BigInt(row.cost_micro_dzd ?? -1) !== settled || row.outcome !== outcome) {
      violations.push(
        `${where}: usage record ${row.outcome} at ${row.cost_micro_dzd} µDZD, hold ${settled}`,
      );
    }
    if (row.refunded) violations.push(`${where}: refunded (the answer reached nobody)`);
  }
  if (rows.length === 0) violations.push('no hold at all: the suite charged nothing');
  const pending = await stack.pendingHolds();
  if (pending !== 0) violations.push(`${pending} holds still pending`);
  const check = await stack.ledgerCheck();
  if (!check.ok) violations.push(`ledger check: ${JSON.stringify(check.violations)}`);
  return violations;
}

/** What the suite's tool returns for a city: the final answer must quote it verbatim. */
export const weatherReport = (city: string) => `sunny, 21 C in ${city}`;

/** A tiny valid PNG (8 × 8, one colour), for image parts. */
export function tinyPng(): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed));
    return Buffer.concat([length, typed, crc]);
  };
  const size = 8;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits per channel, RGB, deflate, no filter, no interlace
  // Each row: filter byte 0, then RGB pixels.
  const row = Buffer.concat([Buffer.from([0]), Buffer.from('c8a03c'.repeat(size), 'hex')]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: size }, () => row)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', pixels),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

export const pngDataUrl = () => `data:image/png;base64,${tinyPng().toString('base64')}`;

/** The error a promise rejected with; throws when it resolved. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** A JSON error body's `error` object (`{error: {message, type, code, param}}`), if it is one. */
export function gatewayError(body: unknown): { code?: string; message?: string; param?: string } {
  let parsed = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return {};
    }
  }
  const error = (parsed as { error?: unknown } | null | undefined)?.error;
  return typeof error === 'object' && error !== null ? (error as Record<string, string>) : {};
}

/**
 * What a client built on the `openai` SDK surfaces for an HTTP error: its APIError (status,
 * headers, code, param), possibly wrapped (LangChain adds `lc_error_code`).
 */
export function httpError(error: unknown) {
  const shaped = error as {
    status?: number;
    code?: string;
    param?: string;
    message?: string;
    headers?: Headers | Record<string, string>;
    error?: unknown;
    lc_error_code?: string;
  };
  if (typeof shaped?.status !== 'number') {
    throw new Error(`expected an HTTP error, got ${String(error)}`, { cause: error });
  }
  const headers = shaped.headers;
  const header = (name: string) =>
    headers instanceof Headers ? headers.get(name) : (headers?.[name] ?? null);
  const body = gatewayError({ error: shaped.error });
  return {
    status: shaped.status,
    code: shaped.code ?? body.code,
    param: shaped.param ?? body.param,
    message: shaped.message ?? '',
    retryAfter: header('retry-after'),
    lcErrorCode: shaped.lc_error_code,
  };
}

/** A `fetch` that keeps the JSON body of every request a client sends (what it sent, as sent). */
export function recordingFetch(): { fetch: typeof fetch; sent: Record<string, unknown>[] } {
  const sent: Record<string, unknown>[] = [];
  const recording = async (input: string | URL | Request, init?: RequestInit) => {
    if (typeof init?.body === 'string') {
      try {
        sent.push(JSON.parse(init.body) as Record<string, unknown>);
      } catch {
        // Not JSON (a multipart upload): nothing to keep.
      }
    }
    return fetch(input, init);
  };
  return { fetch: recording as typeof fetch, sent };
}

/** The field an image part sits at when it is the second part of the first message. */
export const IMAGE_FIELD = 'messages[0].content[1]';

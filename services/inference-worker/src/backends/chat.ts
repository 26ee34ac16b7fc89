/*
 * The chat backend: builds the body for a node (allowlist, caps) or the external provider, calls
 * it with failover, and answers whole or relays the stream, counting what it produced.
 */
import { NODE_FORWARDED_CHAT_PARAMETERS } from '@gateway/contracts';
import { countChatPromptTokens, countTextTokens, type ChatMessageLike } from '@gateway/tokenizer';
import { translateForExternalProvider } from '../external/translate.js';
import { UpstreamError } from '../upstream/errors.js';
import {
  openUpstream,
  readJson,
  readSseEvents,
  usageFrom,
  type StreamEvent,
  type UpstreamResponse,
} from '../upstream/http.js';
import { withFailover, type NodeRef } from '../upstream/node-pool.js';
import type { ExecutionContext, ExecutionResult, TokenUsage } from './context.js';

const nowS = (): number => Math.floor(Date.now() / 1000);

function openAiUsage({ promptTokens, completionTokens }: TokenUsage) {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

interface ChatTarget {
  nodes: NodeRef[];
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  warnings: string[];
}

function nodeTarget(ctx: ExecutionContext): ChatTarget {
  const request = ctx.job.request;
  // Built from the allowlist, not copied: edge and billing refuse other parameters already, and
  // a job that slipped through still cannot make a node do work that usage does not bill.
  const body: Record<string, unknown> = { model: ctx.model.upstreamModel };
  for (const name of NODE_FORWARDED_CHAT_PARAMETERS) {
    if (request[name] !== undefined) body[name] = request[name];
  }
  body.messages = developerAsSystem(request.messages);
  const asked = request.max_completion_tokens ?? request.max_tokens;
  // The catalog's output cap bounds every request; reaching it ends with finish_reason "length".
  body.max_tokens =
    typeof asked === 'number'
      ? Math.min(asked, ctx.model.maxOutputTokens)
      : ctx.model.maxOutputTokens;
  if (ctx.job.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return { nodes: ctx.model.nodes, path: '/v1/chat/completions', headers: {}, body, warnings: [] };
}

/**
 * `developer` is the reference API's newer name for system instructions; the chat templates of
 * open models (what vLLM and TGI render) know `system` only, and refuse or drop other roles. The
 * external provider receives the messages as sent.
 */
function developerAsSystem(messages: unknown): unknown {
  if (!Array.isArray(messages)) return messages;
  return messages.map((message: unknown) =>
    (message as { role?: unknown } | null)?.role === 'developer'
      ? { ...(message as object), role: 'system' }
      : message,
  );
}

function externalTarget(ctx: ExecutionContext): ChatTarget {
  if (!ctx.external) {
    throw new UpstreamError('rejected', 'no external provider is configured for this worker');
  }
  const { body, warnings } = translateForExternalProvider(ctx.job.request, {
    upstreamModel: ctx.model.upstreamModel,
    maxOutputTokens: ctx.model.maxOutputTokens,
  });
  return {
    nodes: [{ url: ctx.external.url, weight: 1 }],
    path: '/v1/chat/completions',
    headers: { Authorization: `Bearer ${ctx.external.apiKey}` },
    body,
    warnings,
  };
}

function promptTokens(ctx: ExecutionContext): number {
  if (ctx.job.promptTokens !== undefined) return ctx.job.promptTokens;
  const messages = ctx.job.request.messages;
  return Array.isArray(messages) ? countChatPromptTokens(messages as ChatMessageLike[]) : 0;
}

export async function executeChat(ctx: ExecutionContext): Promise<ExecutionResult> {
  const target = ctx.model.provider === 'external' ? externalTarget(ctx) : nodeTarget(ctx);
  const open = (url: string) =>
    openUpstream({
      url: url.replace(/\/+$/, '') + target.path,
      headers: target.headers,
      peer: ctx.model.provider === 'external' ? 'provider' : 'node',
      body: target.body,
      signal: ctx.signal,
      firstByteTimeoutMs: ctx.timeouts.firstByteMs,
      dispatcher: ctx.upstreamAgent,
    });
  return withFailover({
    registry: ctx.registry,
    nodes: target.nodes,
    maxAttempts: ctx.maxAttempts,
    onAttemptFailed: (_node, error) => ctx.onAttemptFailed(error.failure),
    relayed: () => ctx.progress.relayed,
    attempt: async (node) => {
      const upstream = await open(node.url);
      // The node accepted the request: from here on its prompt counts as processed (billed).
      ctx.progress.promptAccepted = true;
      return ctx.job.stream
        ? relayStream(ctx, upstream, target.warnings)
        : completeOnce(ctx, upstream, target.warnings);
    },
  });
}

async function completeOnce(
  ctx: ExecutionContext,
  upstream: UpstreamResponse,
  warnings: string[],
): Promise<ExecutionResult> {
  const body = (await readJson(upstream, ctx.timeouts.requestMs, ctx.responseMaxBytes)) as Record<
    string,
    unknown
  >;
  if (!Array.isArray(body.choices)) {
    throw new UpstreamError('bad_response', 'chat answer without choices');
  }
  const usage = usageFrom(body, () => ({
    promptTokens: promptTokens(ctx),
    completionTokens: countTextTokens(choiceTexts(body.choices as unknown[])),
  }));
  const data = {
    ...body,
    id: ctx.job.jobId,
    object: 'chat.completion',
    model: ctx.job.model,
    usage: { ...(body.usage as object | undefined), ...openAiUsage(usage) },
  };
  return { usage, warnings, buildData: () => data };
}

/** Everything generated in a whole answer: content, reasoning, refusals and tool calls. */
function choiceTexts(choices: unknown[]): string {
  return choices
    .map((choice) => generatedText((choice as { message?: Record<string, unknown> }).message))
    .join('');
}

/** Text fields of a streamed delta the model generated; every one is billed as output. */
const DELTA_TEXT_FIELDS = ['content', 'reasoning_content', 'reasoning', 'refusal'] as const;

function toolCallText(call: unknown): string {
  const fn = (call as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
  return [fn?.name, fn?.arguments].filter((part) => typeof part === 'string').join('');
}

/** The generated text of a message or a streamed delta. */
function generatedText(message: Record<string, unknown> | undefined): string {
  if (!message) return '';
  const texts = DELTA_TEXT_FIELDS.map((field) => message[field]).filter(
    (text): text is string => typeof text === 'string',
  );
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.map(toolCallText) : [];
  return [...texts, ...calls].join('');
}

/** Everything generated in one streamed event: content, reasoning, refusals and tool calls. */
function deltaText(event: StreamEvent): string {
  const choices = Array.isArray(event.choices) ? event.choices : [];
  return choices
    .map((choice) => generatedText((choice as { delta?: Record<string, unknown> }).delta))
    .join('');
}

/**
 * Chunks with nothing generated that open a stream (the role's delta) wait, at most this many,
 * for the first chunk with output and are merged into it: a stream's first reply always carries
 * output. An edge that dies, or a run that is replaced, before it leaves its client nothing that
 * could be charged (docs/adr/0065-stream-opens-with-output.md); and the job can still fail over
 * to another node until then.
 */
const MAX_OPENING_CHUNKS = 8;

type Choice = { index?: unknown; delta?: Record<string, unknown> } & Record<string, unknown>;

/**
 * The first chunk with output, carrying what the opening chunks held before it: each choice's
 * delta gains their fields (the role) where it has none of its own, and a choice only they had
 * comes along. One reply, so no edge can relay the opening without the output.
 */
export function withOpening(
  opening: Record<string, unknown>[],
  chunk: Record<string, unknown>,
): Record<string, unknown> {
  if (opening.length === 0) return chunk;
  const choices = new Map<unknown, Choice>();
  for (const held of [...opening, chunk]) {
    for (const choice of (held.choices ?? []) as Choice[]) {
      const before = choices.get(choice.index);
      choices.set(choice.index, {
        ...before,
        ...choice,
        delta: { ...before?.delta, ...choice.delta },
      });
    }
  }
  return { ...chunk, choices: [...choices.values()] };
}

/** Relays chunks as they arrive; the usage chunk is held back for the final reply. */
async function relayStream(
  ctx: ExecutionContext,
  upstream: UpstreamResponse,
  warnings: string[],
): Promise<ExecutionResult> {
  let reported: TokenUsage | undefined;
  let finished = false;
  const opening: Record<string, unknown>[] = [];
  for await (const event of readSseEvents(upstream, ctx.timeouts.idleMs)) {
    if (event.error !== undefined)
      throw new UpstreamError('server_error', 'model node streamed an error');
    if (event.usage) {
      reported = usageFrom(event, () => ({ promptTokens: 0, completionTokens: 0 }));
      ctx.progress.reportedUsage = reported;
    }
    const choices = Array.isArray(event.choices) ? event.choices : [];
    if (choices.length === 0) continue;
    if (choices.some((choice) => (choice as { finish_reason?: unknown }).finish_reason))
      finished = true;
    const chunk: Record<string, unknown> = { ...event, id: ctx.job.jobId, model: ctx.job.model };
    delete chunk.usage;
    const text = deltaText(event);
    if (!ctx.progress.relayed && text === '' && !finished && opening.length < MAX_OPENING_CHUNKS) {
      opening.push(chunk);
      continue;
    }
    ctx.progress.relayed = true;
    // Only a chunk that reached edge's reply queue is billed (a returned one is a disconnect).
    if (await ctx.emitChunk(withOpening(opening.splice(0), chunk))) {
      ctx.progress.relayedText += text;
    }
  }
  if (!finished) throw new UpstreamError('connect', 'model node ended the stream early');
  const usage = reported ?? {
    promptTokens: promptTokens(ctx),
    completionTokens: countTextTokens(ctx.progress.relayedText),
  };
  const data = {
    id: ctx.job.jobId,
    object: 'chat.completion.chunk',
    created: nowS(),
    model: ctx.job.model,
    choices: [],
    usage: openAiUsage(usage),
  };
  return { usage, warnings, buildData: () => data };
}

/**
 * Usage of a job cancelled midway: the node's own usage when it reported one, else the prompt
 * and the tokens relayed so far (content, reasoning and tool calls alike).
 */
export function partialChatUsage(ctx: ExecutionContext): TokenUsage {
  if (ctx.progress.reportedUsage) return ctx.progress.reportedUsage;
  return {
    promptTokens: promptTokens(ctx),
    completionTokens: countTextTokens(ctx.progress.relayedText),
  };
}

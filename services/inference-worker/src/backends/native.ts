import { NATIVE_PARAMETER_NAMES } from '@gateway/contracts';
import { countTextTokens } from '@gateway/tokenizer';
import { UpstreamError } from '../upstream/errors.js';
import { openUpstream, readJson, usageFrom } from '../upstream/http.js';
import { withFailover } from '../upstream/node-pool.js';
import type { ExecutionContext, ExecutionResult, TokenUsage } from './context.js';

/*
 * The native endpoint (`input`/`inputs`, `parameters`, `stop`): TGI-style nodes get `/generate`
 * (and `/embed`), OpenAI-compatible nodes `/v1/completions` (and `/v1/embeddings`).
 */

interface Generated {
  text: string;
  usage: TokenUsage;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function outputCap(ctx: ExecutionContext): number {
  const parameters = isRecord(ctx.job.request.parameters) ? ctx.job.request.parameters : {};
  const asked = parameters.max_new_tokens;
  return typeof asked === 'number'
    ? Math.min(asked, ctx.model.maxOutputTokens)
    : ctx.model.maxOutputTokens;
}

/** Only the schema's parameters reach a node, whatever the job carries (defence in depth). */
function allowedParameters(value: unknown): Record<string, unknown> {
  if (!isRecord(value)) return {};
  const allowed = NATIVE_PARAMETER_NAMES.filter((name) => value[name] !== undefined);
  return Object.fromEntries(allowed.map((name) => [name, value[name]]));
}

async function postJson(ctx: ExecutionContext, nodeUrl: string, path: string, body: unknown) {
  const upstream = await openUpstream({
    url: nodeUrl.replace(/\/+$/, '') + path,
    body,
    signal: ctx.signal,
    firstByteTimeoutMs: ctx.timeouts.firstByteMs,
    peer: 'node',
    dispatcher: ctx.upstreamAgent,
  });
  return readJson(upstream, ctx.timeouts.requestMs, ctx.responseMaxBytes);
}

async function generateTgi(
  ctx: ExecutionContext,
  nodeUrl: string,
  input: string,
): Promise<Generated> {
  const request = ctx.job.request;
  const parameters = {
    ...allowedParameters(request.parameters),
    max_new_tokens: outputCap(ctx),
    ...(Array.isArray(request.stop) ? { stop: request.stop } : {}),
    details: true,
    decoder_input_details: true,
  };
  const body = await postJson(ctx, nodeUrl, '/generate', { inputs: input, parameters });
  if (!isRecord(body) || typeof body.generated_text !== 'string') {
    throw new UpstreamError('bad_response', 'generate answer without generated_text');
  }
  const details = isRecord(body.details) ? body.details : {};
  const generated = details.generated_tokens;
  return {
    text: body.generated_text,
    usage: {
      promptTokens: Array.isArray(details.prefill)
        ? details.prefill.length
        : countTextTokens(input),
      completionTokens:
        typeof generated === 'number' ? generated : countTextTokens(body.generated_text),
    },
  };
}

async function generateOpenAi(
  ctx: ExecutionContext,
  nodeUrl: string,
  input: string,
): Promise<Generated> {
  const request = ctx.job.request;
  const parameters = isRecord(request.parameters) ? request.parameters : {};
  const body = await postJson(ctx, nodeUrl, '/v1/completions', {
    model: ctx.model.upstreamModel,
    prompt: input,
    max_tokens: outputCap(ctx),
    ...(typeof parameters.temperature === 'number' ? { temperature: parameters.temperature } : {}),
    ...(typeof parameters.top_p === 'number' ? { top_p: parameters.top_p } : {}),
    ...(Array.isArray(request.stop) ? { stop: request.stop } : {}),
  });
  const text =
    isRecord(body) && Array.isArray(body.choices)
      ? (body.choices[0] as { text?: unknown })?.text
      : undefined;
  if (typeof text !== 'string')
    throw new UpstreamError('bad_response', 'completion answer without text');
  return {
    text,
    usage: usageFrom(body as Record<string, unknown>, () => ({
      promptTokens: countTextTokens(input),
      completionTokens: countTextTokens(text),
    })),
  };
}

async function embed(ctx: ExecutionContext, nodeUrl: string, inputs: string[]) {
  const fallback = () => ({
    promptTokens: inputs.reduce((sum, text) => sum + countTextTokens(text), 0),
    completionTokens: 0,
  });
  if (ctx.model.protocol === 'tgi') {
    const body = await postJson(ctx, nodeUrl, '/embed', { inputs });
    if (!Array.isArray(body)) throw new UpstreamError('bad_response', 'embed answer is not a list');
    return { embeddings: body as number[][], usage: fallback() };
  }
  const body = await postJson(ctx, nodeUrl, '/v1/embeddings', {
    model: ctx.model.upstreamModel,
    input: inputs,
  });
  if (!isRecord(body) || !Array.isArray(body.data)) {
    throw new UpstreamError('bad_response', 'embeddings answer without data');
  }
  const embeddings = body.data.map((item) => (item as { embedding?: number[] }).embedding ?? []);
  return { embeddings, usage: usageFrom(body, fallback) };
}

export async function executeNative(ctx: ExecutionContext): Promise<ExecutionResult> {
  const startedMs = Date.now();
  const request = ctx.job.request;
  const inputs = Array.isArray(request.inputs) ? request.inputs.map(String) : undefined;
  const input = typeof request.input === 'string' ? request.input : (inputs?.join('\n') ?? '');
  const run = <T>(attempt: (url: string) => Promise<T>) =>
    withFailover({
      registry: ctx.registry,
      nodes: ctx.model.nodes,
      maxAttempts: ctx.maxAttempts,
      onAttemptFailed: (_node, error) => ctx.onAttemptFailed(error.failure),
      relayed: () => false,
      attempt: (node) => attempt(node.url),
    });
  if (ctx.model.kind === 'embedding') {
    const { embeddings, usage } = await run((url) => embed(ctx, url, inputs ?? [input]));
    return finish(ctx, startedMs, usage, { embeddings });
  }
  const generated = await run((url) =>
    ctx.model.protocol === 'tgi' ? generateTgi(ctx, url, input) : generateOpenAi(ctx, url, input),
  );
  return finish(ctx, startedMs, generated.usage, { results: [{ generated_text: generated.text }] });
}

function finish(
  ctx: ExecutionContext,
  startedMs: number,
  usage: TokenUsage,
  output: { results?: { generated_text: string }[]; embeddings?: number[][] },
): ExecutionResult {
  const runtimeMs = Date.now() - startedMs;
  return {
    usage,
    warnings: [],
    ...output,
    buildData: (costDzd) => ({
      id: ctx.job.jobId,
      model: ctx.job.model,
      ...output,
      num_input_tokens: usage.promptTokens,
      num_tokens: usage.completionTokens,
      inference_status: {
        status: 'succeeded',
        runtime_ms: runtimeMs,
        cost: costDzd,
        tokens_input: usage.promptTokens,
        tokens_generated: usage.completionTokens,
      },
    }),
  };
}

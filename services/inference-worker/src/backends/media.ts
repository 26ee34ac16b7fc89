import type { InferenceEndpoint } from '@gateway/contracts';
import { countTextTokens } from '@gateway/tokenizer';
import { UpstreamError } from '../upstream/errors.js';
import { openUpstream, readBytes, readJson, usageFrom } from '../upstream/http.js';
import { withFailover } from '../upstream/node-pool.js';
import type { ExecutionContext, ExecutionResult, TokenUsage } from './context.js';

/*
 * The OpenAI-style routes of default models, forwarded to the node's route of the same name
 * with the upstream model id. Usage comes from the node's answer; when a node reports none, the
 * gateway tokenizer counts the text that went in (and, for transcriptions, the text that came
 * out). Binary audio is base64 in the reply, so it is capped below the bus's message limit.
 */

export const MAX_AUDIO_BYTES = 2_500_000;

const PATHS: Partial<Record<InferenceEndpoint, string>> = {
  embeddings: '/v1/embeddings',
  images: '/v1/images/generations',
  speech: '/v1/audio/speech',
  transcription: '/v1/audio/transcriptions',
  video: '/v1/video/generations',
  rerank: '/v1/rerank',
};

const text = (value: unknown): string =>
  typeof value === 'string' ? value : Array.isArray(value) ? value.map(text).join('\n') : '';

/** Tokens of the text a request carries (its prompt, input, query and documents). */
function inputTokens(request: Record<string, unknown>): number {
  return ['input', 'prompt', 'query', 'documents']
    .map((field) => countTextTokens(text(request[field])))
    .reduce((sum, count) => sum + count, 0);
}

function transcriptionForm(ctx: ExecutionContext): FormData {
  const { file, ...fields } = ctx.job.request as { file?: Record<string, unknown> } & Record<
    string,
    unknown
  >;
  if (!file || typeof file.base64 !== 'string') {
    throw new UpstreamError('rejected', 'transcription job without a file');
  }
  const form = new FormData();
  const bytes = Buffer.from(file.base64, 'base64');
  const type = typeof file.contentType === 'string' ? file.contentType : 'application/octet-stream';
  form.append(
    'file',
    new Blob([bytes], { type }),
    typeof file.filename === 'string' ? file.filename : 'audio',
  );
  form.append('model', ctx.model.upstreamModel);
  for (const [name, value] of Object.entries(fields)) {
    if (name !== 'model' && value !== undefined) form.append(name, String(value));
  }
  return form;
}

async function attempt(
  ctx: ExecutionContext,
  nodeUrl: string,
  path: string,
): Promise<ExecutionResult> {
  const endpoint = ctx.job.endpoint;
  const request = ctx.job.request;
  const upstream = await openUpstream({
    url: nodeUrl.replace(/\/+$/, '') + path,
    body:
      endpoint === 'transcription'
        ? transcriptionForm(ctx)
        : { ...request, model: ctx.model.upstreamModel },
    signal: ctx.signal,
    firstByteTimeoutMs: ctx.timeouts.firstByteMs,
    peer: 'node',
    dispatcher: ctx.upstreamAgent,
  });
  const fallback = (): TokenUsage => ({ promptTokens: inputTokens(request), completionTokens: 0 });
  if (endpoint === 'speech') {
    const contentType = upstream.header('content-type') ?? 'application/octet-stream';
    const audio = await readBytes(upstream, ctx.timeouts.requestMs, MAX_AUDIO_BYTES);
    const data = { audio_base64: audio.toString('base64'), content_type: contentType };
    return { usage: fallback(), warnings: [], buildData: () => data };
  }
  const body = await readJson(upstream, ctx.timeouts.requestMs, ctx.responseMaxBytes);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new UpstreamError('bad_response', 'model node answered a non-object');
  }
  const answer = body as Record<string, unknown>;
  const usage = usageFrom(answer, () =>
    endpoint === 'transcription'
      ? { promptTokens: 0, completionTokens: countTextTokens(text(answer.text)) }
      : fallback(),
  );
  const data = { ...answer, model: ctx.job.model };
  return { usage, warnings: [], buildData: () => data };
}

export async function executeMedia(ctx: ExecutionContext): Promise<ExecutionResult> {
  const path = PATHS[ctx.job.endpoint];
  if (!path || ctx.model.protocol !== 'openai') {
    throw new UpstreamError('rejected', `the model's nodes do not serve ${ctx.job.endpoint}`);
  }
  return withFailover({
    registry: ctx.registry,
    nodes: ctx.model.nodes,
    maxAttempts: ctx.maxAttempts,
    onAttemptFailed: (_node, error) => ctx.onAttemptFailed(error.failure),
    relayed: () => false,
    attempt: (node) => attempt(ctx, node.url, path),
  });
}

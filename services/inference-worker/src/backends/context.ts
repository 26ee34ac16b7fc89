import type { CatalogEntry, InferenceJobPayload } from '@gateway/contracts';
import type { NodeRegistry } from '../upstream/node-pool.js';
import { UpstreamError } from '../upstream/errors.js';

export interface UpstreamTimeouts {
  firstByteMs: number;
  idleMs: number;
  requestMs: number;
  /** Overall cap of one started job, far above any real generation (`JOB_MAX_GENERATION_MS`). */
  generationMs: number;
}

export interface ExternalProvider {
  url: string;
  apiKey: string;
}

/** Everything one job execution needs; built per job by the job runner. */
export interface ExecutionContext {
  job: InferenceJobPayload;
  model: CatalogEntry;
  /** Aborted on cancellation or at the generation cap (the reason says which). */
  signal: AbortSignal;
  timeouts: UpstreamTimeouts;
  /** Largest non-streamed answer read from a node or the provider (`NODE_RESPONSE_MAX_BYTES`). */
  responseMaxBytes: number;
  registry: NodeRegistry;
  maxAttempts: number;
  external: ExternalProvider | undefined;
  /** Relays one streamed chunk to edge (chat streams only); false when nobody received it. */
  emitChunk(chunk: Record<string, unknown>): Promise<boolean>;
  /** Counts a failed attempt on a node (for metrics); failover decides what happens next. */
  onAttemptFailed(failure: string): void;
  /** What was already produced: read by the runner when the job is cancelled midway. */
  progress: Progress;
}

export interface Progress {
  /** True once anything left the worker: no failover to another node after that. */
  relayed: boolean;
  /**
   * Output text relayed so far (all choices: content, reasoning, refusals, tool-call names and
   * arguments), to count the tokens of a cancelled stream.
   */
  relayedText: string;
  /** A node answered the request (HTTP 2xx, headers received): its prompt counts as processed. */
  promptAccepted: boolean;
  /** Usage the node reported in the stream, if it did before the job ended. */
  reportedUsage?: TokenUsage;
}

export interface TokenUsage {
  promptTokens: number;
  /** Reasoning tokens included: they are billed as output. */
  completionTokens: number;
}

export interface ExecutionResult {
  usage: TokenUsage;
  /**
   * The final reply's `data`, once the settled cost is known (native needs it); null when the
   * settlement was queued because billing did not answer (the cost is not known yet).
   */
  buildData(costDzd: number | null): Record<string, unknown>;
  warnings: string[];
  /** For the webhook: texts generated (native) or embeddings. */
  results?: { generated_text: string }[];
  embeddings?: number[][];
}

export const nowS = (): number => Math.floor(Date.now() / 1000);

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;

/**
 * Usage as an upstream reported it, in either naming (`prompt_tokens`/`completion_tokens` of chat
 * APIs, `input_tokens`/`output_tokens` of image and audio APIs). Missing counts come from
 * `fallback` (the gateway tokenizer); a count that is present but malformed is a bad answer.
 */
export function usageFrom(body: Record<string, unknown>, fallback: () => TokenUsage): TokenUsage {
  const usage = body.usage;
  if (usage === undefined || usage === null) return fallback();
  if (typeof usage !== 'object') throw new UpstreamError('bad_response', 'malformed usage');
  const raw = usage as Record<string, unknown>;
  const prompt = count(raw.prompt_tokens) ?? count(raw.input_tokens);
  const completion = count(raw.completion_tokens) ?? count(raw.output_tokens);
  if (prompt === undefined && completion === undefined) return fallback();
  return { promptTokens: prompt ?? fallback().promptTokens, completionTokens: completion ?? 0 };
}

export function openAiUsage({ promptTokens, completionTokens }: TokenUsage) {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

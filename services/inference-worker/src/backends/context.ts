/*
 * The contract between the job runner and the backends (types only): what one job execution is
 * given, what it records as it goes, and what it returns.
 */
import type { CatalogEntry, InferenceJobPayload } from '@gateway/contracts';
import type { Dispatcher } from 'undici';
import type { NodeRegistry } from '../upstream/node-pool.js';

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
  /** The worker's connections to nodes and the provider (`createUpstreamAgent`). */
  upstreamAgent: Dispatcher;
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

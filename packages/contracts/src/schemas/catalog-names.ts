/*
 * The catalog's names (model kinds, node providers and protocols, what a node's last failure
 * was), in a module of plain values: the browser app reads the catalog's schemas
 * (catalog-api.ts, operator-api.ts), so they must not pull in the node-side modules that also
 * use these names (envelopes.ts, billing-api.ts).
 */

export const MODEL_KINDS = [
  'chat',
  'completion',
  'embedding',
  'image',
  'speech',
  'transcription',
  'video',
  'rerank',
] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

export const MODEL_PROVIDERS = ['node', 'external'] as const;
export const NODE_PROTOCOLS = ['openai', 'tgi'] as const;

/** What a worker last saw go wrong with a node (billing-api.ts's node health report). */
export const NODE_HEALTH_ERROR_KINDS = [
  'unreachable',
  'timeout',
  'http_error',
  'rate_limited',
  'bad_response',
] as const;
/** A catalog node's last observed health; `unknown`: no recent report. */
export const NODE_HEALTH_STATES = ['healthy', 'down', 'unknown'] as const;

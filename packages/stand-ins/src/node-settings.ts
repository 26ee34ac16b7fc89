import {
  DEFAULT_MAX_MODEL_LEN,
  MAX_ANSWER_TOKENS,
  MAX_EMBEDDING_DIMENSIONS,
  MAX_LATENCY_MS,
  MAX_TOKENS_PER_SECOND,
} from './limits.js';

/** Behaviour of a stand-in model node that a test may change while it runs (setOptions). */
export interface StandInNodeSettings {
  /** Delay before the first token (and before non-text answers). */
  firstTokenLatencyMs: number;
  /** Pace of the following tokens; 0 = as fast as possible. */
  tokensPerSecond: number;
  /** Natural answer length range, in tokens. */
  answerTokensMin: number;
  answerTokensMax: number;
  /** Embedding size when the request gives no `dimensions`. */
  embeddingDimensions: number;
  /** Context window: prompt + completion tokens. */
  maxModelLen: number;
  /** Model ids served; null = answer for any model id. */
  models: string[] | null;
}

export const DEFAULT_NODE_SETTINGS: StandInNodeSettings = {
  firstTokenLatencyMs: 20,
  tokensPerSecond: 500,
  answerTokensMin: 30,
  answerTokensMax: 60,
  embeddingDimensions: 8,
  maxModelLen: DEFAULT_MAX_MODEL_LEN,
  models: null,
};

function checkInteger(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`stand-in node: ${name} must be an integer from ${min} to ${max}`);
  }
}

/** Merges a partial update into settings, refusing values outside the limits. */
export function mergeSettings(
  base: StandInNodeSettings,
  update: Partial<StandInNodeSettings>,
): StandInNodeSettings {
  const defined = Object.fromEntries(Object.entries(update).filter(([, v]) => v !== undefined));
  const next = { ...base, ...defined } as StandInNodeSettings;
  checkInteger('firstTokenLatencyMs', next.firstTokenLatencyMs, 0, MAX_LATENCY_MS);
  checkInteger('tokensPerSecond', next.tokensPerSecond, 0, MAX_TOKENS_PER_SECOND);
  checkInteger('answerTokensMin', next.answerTokensMin, 1, MAX_ANSWER_TOKENS);
  checkInteger('answerTokensMax', next.answerTokensMax, next.answerTokensMin, MAX_ANSWER_TOKENS);
  checkInteger('embeddingDimensions', next.embeddingDimensions, 1, MAX_EMBEDDING_DIMENSIONS);
  checkInteger('maxModelLen', next.maxModelLen, 16, 1_048_576);
  if (next.models !== null && !next.models.every((m) => typeof m === 'string' && m.length > 0)) {
    throw new Error('stand-in node: models must be non-empty strings');
  }
  return next;
}

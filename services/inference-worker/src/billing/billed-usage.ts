import type { TokenUsage } from '../backends/index.js';

/** The usage in billing's terms (settle requests and queued settlements). */
export const billed = (usage: TokenUsage) => ({
  inputTokens: usage.promptTokens,
  outputTokens: usage.completionTokens,
});

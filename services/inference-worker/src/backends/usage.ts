import { UpstreamError } from '../upstream/errors.js';
import type { TokenUsage } from './context.js';

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

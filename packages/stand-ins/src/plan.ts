import { splitIntoTokens } from '@gateway/tokenizer';
import { hash32 } from './answer.js';

/*
 * What one choice will emit, decided before any token is sent: the pieces (tokens) of the
 * answer after the already generated prefix, cut by the token cap and by stop sequences.
 */

/** `stop`: natural end (TGI: eos_token); `stop_sequence`: cut by a stop string (OpenAI: stop). */
export type FinishReason = 'stop' | 'length' | 'stop_sequence';

export interface Plan {
  /** Text pieces to emit, one per generated token (the last may be cut by a stop string). */
  pieces: string[];
  /** Tokens the model generated, including those of a stop string it does not emit. */
  generatedTokens: number;
  finishReason: FinishReason;
}

export interface PlanRequest {
  answer: string;
  prefix: string;
  maxTokens: number;
  stop: readonly string[];
  /** TGI keeps the stop string in the output; OpenAI-compatible servers drop it. */
  keepStop: boolean;
}

/** Pieces still to generate after prefix, keeping the full answer's token boundaries. */
function remainingPieces(answer: string, prefix: string): string[] {
  const all = splitIntoTokens(answer);
  let offset = 0;
  for (let index = 0; index <= all.length; index += 1) {
    if (offset === prefix.length) return all.slice(index);
    if (offset > prefix.length) break;
    offset += all[index]?.length ?? 0;
  }
  // The prefix ends inside a token: tokenise the rest on its own.
  return splitIntoTokens(answer.slice(prefix.length));
}

function earliestStop(text: string, stop: readonly string[]): { at: number; end: number } | null {
  let best: { at: number; end: number } | null = null;
  for (const sequence of stop) {
    if (sequence.length === 0) continue;
    const at = text.indexOf(sequence);
    if (at >= 0 && (best === null || at < best.at)) best = { at, end: at + sequence.length };
  }
  return best;
}

/** Keeps the first keepChars characters, counting tokens up to generatedChars. */
function cutPieces(pieces: readonly string[], keepChars: number, generatedChars: number): Plan {
  const kept: string[] = [];
  let offset = 0;
  let generatedTokens = 0;
  for (const piece of pieces) {
    if (offset >= generatedChars) break;
    generatedTokens += 1;
    if (offset < keepChars) kept.push(piece.slice(0, keepChars - offset));
    offset += piece.length;
  }
  return { pieces: kept, generatedTokens, finishReason: 'stop_sequence' };
}

export function planGeneration(request: PlanRequest): Plan {
  const remaining = remainingPieces(request.answer, request.prefix);
  const capped = remaining.slice(0, Math.max(0, request.maxTokens));
  const stop = earliestStop(capped.join(''), request.stop);
  if (stop !== null) return cutPieces(capped, request.keepStop ? stop.end : stop.at, stop.end);
  const finishReason = remaining.length > capped.length ? 'length' : 'stop';
  return { pieces: capped, generatedTokens: capped.length, finishReason };
}

export function openAiFinishReason(reason: FinishReason): 'stop' | 'length' {
  return reason === 'length' ? 'length' : 'stop';
}

export function tgiFinishReason(reason: FinishReason): 'length' | 'eos_token' | 'stop_sequence' {
  return reason === 'stop' ? 'eos_token' : reason;
}

/** Stand-in token ids and log-probabilities: stable per text, not real vocabulary ids. */
export function tokenDetails(text: string): { id: number; text: string; logprob: number } {
  const logprob = -((hash32(`logprob:${text}`) % 3000) / 1000);
  return { id: hash32(`id:${text}`) % 200_000, text, logprob };
}

export function totalGenerated(plans: readonly Plan[]): number {
  return plans.reduce((sum, plan) => sum + plan.generatedTokens, 0);
}

export function longestPlan(plans: readonly Plan[]): number {
  return plans.reduce((most, plan) => Math.max(most, plan.pieces.length), 0);
}

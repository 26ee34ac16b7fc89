import { countTextTokens } from '@gateway/tokenizer';
import type { Json } from './http-client.suite.js';

/* Test helpers for chat answers: a streamed choice put back together, and expected usage. */

export interface StreamedCall {
  id: string;
  type: string;
  name: string;
  arguments: string;
  /** Chunks that carried a piece of the arguments. */
  argumentChunks: number;
}

export interface StreamedChoice {
  content: string;
  calls: StreamedCall[];
  finishReason: string | null;
  /** Every delta of the choice, in order. */
  deltas: Json[];
}

function addCallDelta(calls: StreamedCall[], delta: Json): void {
  const index = delta.index as number;
  const call = (calls[index] ??= { id: '', type: '', name: '', arguments: '', argumentChunks: 0 });
  call.id += delta.id ?? '';
  call.type += delta.type ?? '';
  call.name += delta.function?.name ?? '';
  const piece = delta.function?.arguments ?? '';
  call.arguments += piece;
  if (piece !== '') call.argumentChunks += 1;
}

/** Choice `index` of a chat stream, as a client library reassembles it. */
export function streamedChoice(events: readonly unknown[], index = 0): StreamedChoice {
  const choice: StreamedChoice = { content: '', calls: [], finishReason: null, deltas: [] };
  for (const event of events) {
    if (event === '[DONE]') continue;
    for (const c of (event as Json).choices ?? []) {
      if (c.index !== index) continue;
      choice.deltas.push(c.delta);
      choice.content += c.delta?.content ?? '';
      for (const call of c.delta?.tool_calls ?? []) addCallDelta(choice.calls, call);
      choice.finishReason = c.finish_reason ?? choice.finishReason;
    }
  }
  return choice;
}

/** Prompt tokens of plain-text messages: 3 per message, the role and the content. */
export function textPromptTokens(messages: readonly { role: string; content: string }[]): number {
  return messages.reduce(
    (sum, m) => sum + 3 + countTextTokens(m.role) + countTextTokens(m.content),
    0,
  );
}

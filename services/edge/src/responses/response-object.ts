/*
 * The Responses API object, built from a chat completion: its message becomes an assistant
 * `message` item (text as one `output_text` part), its tool calls `function_call` items, its
 * finish reason the status, its usage the reference's usage. The request's settings are echoed
 * with the reference's defaults, as the reference answers them.
 */
import type { ResponsesRequest, ResponseItemRecord } from '@gateway/contracts';
import { newFunctionCallId, newMessageId } from './response-ids.js';

type Json = Record<string, unknown>;

/** What a response knows before its model answers. */
export interface ResponseShell {
  id: string;
  createdAtS: number;
  request: ResponsesRequest;
  store: boolean;
}

export type ResponseStatus =
  'queued' | 'in_progress' | 'completed' | 'incomplete' | 'failed' | 'cancelled';

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  cost_dzd?: number;
}

/** The response object; `output`, `usage` and the ending filled in as they become known. */
export function responseObject(
  shell: ResponseShell,
  state: {
    status: ResponseStatus;
    output: ResponseItemRecord[];
    usage?: ResponseUsage | null;
    incompleteReason?: string | null;
    error?: { code: string; message: string } | null;
  },
): Json {
  const { request } = shell;
  const ended = state.status !== 'in_progress' && state.status !== 'queued';
  return {
    id: shell.id,
    object: 'response',
    created_at: shell.createdAtS,
    status: state.status,
    completed_at: state.status === 'completed' ? Math.floor(Date.now() / 1000) : null,
    background: request.background ?? false,
    error: state.error ?? null,
    incomplete_details: state.incompleteReason == null ? null : { reason: state.incompleteReason },
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    metadata: request.metadata ?? {},
    model: request.model,
    output: state.output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: {
      effort: request.reasoning?.effort ?? null,
      summary: request.reasoning?.summary ?? null,
    },
    service_tier: request.service_tier === 'priority' ? 'priority' : 'default',
    store: shell.store,
    temperature: request.temperature ?? 1,
    text: {
      format: request.text?.format ?? { type: 'text' },
      verbosity: request.text?.verbosity ?? 'medium',
    },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    truncation: request.truncation ?? 'disabled',
    usage: ended ? (state.usage ?? null) : null,
    user: request.user ?? null,
    ...(request.safety_identifier === undefined
      ? {}
      : { safety_identifier: request.safety_identifier }),
  };
}

/** An assistant text part as the reference answers it (no annotations, no logprobs asked). */
export const outputTextPart = (text: string) => ({
  type: 'output_text',
  text,
  annotations: [],
  logprobs: [],
});

/** A chat finish reason → the response's status (a length stop is `incomplete`). */
export function endingOf(finishReason: unknown): {
  status: 'completed' | 'incomplete';
  incompleteReason: string | null;
} {
  if (finishReason === 'length')
    return { status: 'incomplete', incompleteReason: 'max_output_tokens' };
  if (finishReason === 'content_filter') {
    return { status: 'incomplete', incompleteReason: 'content_filter' };
  }
  return { status: 'completed', incompleteReason: null };
}

/** Chat usage → the reference's; null when the chat answer carried none. */
export function usageOf(usage: unknown): ResponseUsage | null {
  if (typeof usage !== 'object' || usage === null) return null;
  const u = usage as Json;
  const input = Number(u.prompt_tokens ?? 0);
  const output = Number(u.completion_tokens ?? 0);
  const cached = (u.prompt_tokens_details as Json | undefined)?.cached_tokens;
  const reasoning = (u.completion_tokens_details as Json | undefined)?.reasoning_tokens;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: Number(cached ?? 0) },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: Number(reasoning ?? 0) },
    total_tokens: Number(u.total_tokens ?? input + output),
  };
}

/** A complete chat message → output items: the text (or refusal) first, then each tool call. */
export function outputItemsOf(message: Json | undefined, status: string): ResponseItemRecord[] {
  if (message === undefined) return [];
  const items: ResponseItemRecord[] = [];
  const content: Json[] = [];
  if (typeof message.content === 'string' && message.content !== '') {
    content.push(outputTextPart(message.content));
  }
  if (typeof message.refusal === 'string' && message.refusal !== '') {
    content.push({ type: 'refusal', refusal: message.refusal });
  }
  if (content.length > 0) {
    items.push({ id: newMessageId(), type: 'message', role: 'assistant', status, content });
  }
  for (const call of (message.tool_calls as Json[] | undefined) ?? []) {
    const fn = (call.function ?? {}) as Json;
    items.push({
      id: newFunctionCallId(),
      type: 'function_call',
      call_id: String(call.id),
      name: String(fn.name),
      arguments: String(fn.arguments ?? ''),
      status: 'completed',
    });
  }
  return items;
}

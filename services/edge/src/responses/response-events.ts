/*
 * A chat completion stream → the Responses API's event stream. Each chat chunk may open an
 * output item (text opens an assistant message, a new tool-call index a function call), add to
 * it (`…delta` events), or close it; the end closes what is open and sends the whole response
 * (`response.completed`, or `response.incomplete` on a length stop) with its usage and cost.
 * Every event carries the next `sequence_number`. The translator also keeps the finished output,
 * which is what gets stored.
 */
import type { ResponseItemRecord } from '@gateway/contracts';
import { newFunctionCallId, newMessageId } from './response-ids.js';
import {
  endingOf,
  outputTextPart,
  responseObject,
  usageOf,
  type ResponseShell,
  type ResponseUsage,
} from './response-object.js';

type Json = Record<string, unknown>;
export type ResponseEvent = Json & { type: string; sequence_number: number };

/** An assistant message being streamed: its parts, text and refusal, in the order they began. */
interface OpenText {
  kind: 'text';
  outputIndex: number;
  id: string;
  parts: { type: 'output_text' | 'refusal'; value: string }[];
}
interface OpenCall {
  kind: 'call';
  outputIndex: number;
  id: string;
  chatIndex: number;
  callId: string;
  name: string;
  args: string;
}

const partOf = (part: OpenText['parts'][number]) =>
  part.type === 'refusal' ? { type: 'refusal', refusal: part.value } : outputTextPart(part.value);

export class ResponseEvents {
  readonly output: ResponseItemRecord[] = [];
  #sequence = 0;
  #open: OpenText | OpenCall | null = null;
  #finishReason: unknown = null;
  #usage: ResponseUsage | null = null;

  constructor(private readonly shell: ResponseShell) {}

  /** `response.created` and `response.in_progress`. */
  start(): ResponseEvent[] {
    const response = responseObject(this.shell, { status: 'in_progress', output: [] });
    return [
      this.#event('response.created', { response }),
      this.#event('response.in_progress', { response }),
    ];
  }

  /** One chat chunk (`chat.completion.chunk`). */
  chunk(data: Json): ResponseEvent[] {
    const events: ResponseEvent[] = [];
    const choice = (data.choices as Json[] | undefined)?.[0];
    const delta = (choice?.delta ?? {}) as Json;
    if (typeof delta.content === 'string' && delta.content !== '') {
      events.push(...this.#message('output_text', delta.content));
    }
    if (typeof delta.refusal === 'string' && delta.refusal !== '') {
      events.push(...this.#message('refusal', delta.refusal));
    }
    for (const call of (delta.tool_calls as Json[] | undefined) ?? []) {
      events.push(...this.#toolCall(call));
    }
    if (choice?.finish_reason != null) this.#finishReason = choice.finish_reason;
    const usage = usageOf(data.usage);
    if (usage !== null) this.#usage = usage;
    return events;
  }

  /** The end: closes the open item and sends the whole response (cost in its usage). */
  finish(costDzd: number | undefined, service: Json): { events: ResponseEvent[]; response: Json } {
    const ending = endingOf(this.#finishReason);
    const events = this.#close(ending.status);
    const usage =
      this.#usage && costDzd !== undefined ? { ...this.#usage, cost_dzd: costDzd } : this.#usage;
    const response = {
      ...responseObject(this.shell, { ...ending, output: this.output, usage }),
      _service: service,
    };
    const type = ending.status === 'completed' ? 'response.completed' : 'response.incomplete';
    events.push(this.#event(type, { response }));
    return { events, response };
  }

  /** A failure after the stream began: the reference's `error`, then `response.failed`. */
  fail(error: { code: string; message: string; param?: string }): ResponseEvent[] {
    const events = this.#close('incomplete');
    events.push(
      this.#event('error', {
        code: error.code,
        message: error.message,
        param: error.param ?? null,
      }),
    );
    const response = responseObject(this.shell, {
      status: 'failed',
      output: this.output,
      usage: this.#usage,
      error: { code: error.code, message: error.message },
    });
    events.push(this.#event('response.failed', { response }));
    return events;
  }

  #message(type: 'output_text' | 'refusal', delta: string): ResponseEvent[] {
    const events: ResponseEvent[] = [];
    if (this.#open?.kind !== 'text') {
      events.push(...this.#close('completed'));
      const open: OpenText = {
        kind: 'text',
        outputIndex: this.output.length,
        id: newMessageId(),
        parts: [],
      };
      const item = {
        id: open.id,
        type: 'message',
        role: 'assistant',
        status: 'in_progress',
        content: [],
      };
      this.output.push(item);
      this.#open = open;
      events.push(
        this.#event('response.output_item.added', { output_index: open.outputIndex, item }),
      );
    }
    const open = this.#open as OpenText;
    const at = { item_id: open.id, output_index: open.outputIndex };
    if (open.parts.at(-1)?.type !== type) {
      open.parts.push({ type, value: '' });
      events.push(
        this.#event('response.content_part.added', {
          ...at,
          content_index: open.parts.length - 1,
          part: partOf({ type, value: '' }),
        }),
      );
    }
    open.parts.at(-1)!.value += delta;
    const content_index = open.parts.length - 1;
    events.push(
      type === 'refusal'
        ? this.#event('response.refusal.delta', { ...at, content_index, delta })
        : this.#event('response.output_text.delta', { ...at, content_index, delta, logprobs: [] }),
    );
    return events;
  }

  #toolCall(call: Json): ResponseEvent[] {
    const events: ResponseEvent[] = [];
    const chatIndex = typeof call.index === 'number' ? call.index : 0;
    const fn = (call.function ?? {}) as Json;
    if (this.#open?.kind !== 'call' || this.#open.chatIndex !== chatIndex) {
      events.push(...this.#close('completed'));
      const open: OpenCall = {
        kind: 'call',
        outputIndex: this.output.length,
        id: newFunctionCallId(),
        chatIndex,
        callId: String(call.id ?? ''),
        name: String(fn.name ?? ''),
        args: '',
      };
      const item = this.#callItem(open, 'in_progress');
      this.output.push(item);
      this.#open = open;
      events.push(
        this.#event('response.output_item.added', { output_index: open.outputIndex, item }),
      );
    }
    const open = this.#open as OpenCall;
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      open.args += fn.arguments;
      events.push(
        this.#event('response.function_call_arguments.delta', {
          item_id: open.id,
          output_index: open.outputIndex,
          delta: fn.arguments,
        }),
      );
    }
    return events;
  }

  #callItem(open: OpenCall, status: string): ResponseItemRecord {
    return {
      id: open.id,
      type: 'function_call',
      status,
      arguments: open.args,
      call_id: open.callId,
      name: open.name,
    };
  }

  #close(status: 'completed' | 'incomplete'): ResponseEvent[] {
    const open = this.#open;
    if (open === null) return [];
    this.#open = null;
    const at = { item_id: open.id, output_index: open.outputIndex };
    if (open.kind === 'call') {
      // Cut short by a length stop or a failure: its arguments may be partial.
      const item = this.#callItem(open, status);
      this.output[open.outputIndex] = item;
      return [
        this.#event('response.function_call_arguments.done', {
          ...at,
          arguments: open.args,
          name: open.name,
        }),
        this.#event('response.output_item.done', { output_index: open.outputIndex, item }),
      ];
    }
    const content = open.parts.map(partOf);
    const item = { id: open.id, type: 'message', role: 'assistant', status, content };
    this.output[open.outputIndex] = item;
    const events = open.parts.flatMap((part, content_index) => [
      part.type === 'refusal'
        ? this.#event('response.refusal.done', { ...at, content_index, refusal: part.value })
        : this.#event('response.output_text.done', {
            ...at,
            content_index,
            text: part.value,
            logprobs: [],
          }),
      this.#event('response.content_part.done', { ...at, content_index, part: partOf(part) }),
    ]);
    events.push(this.#event('response.output_item.done', { output_index: open.outputIndex, item }));
    return events;
  }

  #event(type: string, fields: Json): ResponseEvent {
    const event = { type, sequence_number: this.#sequence, ...fields };
    this.#sequence += 1;
    return event;
  }
}

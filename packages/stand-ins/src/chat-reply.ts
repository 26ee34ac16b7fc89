import { randomUUID } from 'node:crypto';
import { countTextTokens } from '@gateway/tokenizer';
import {
  answerText,
  choiceSeed,
  readConversation,
  shortSentence,
  type AnswerLength,
  type Conversation,
} from './answer.js';
import type { ChatMessageParam } from './chat-messages.js';
import type { ChatOptions, OutputFormat, ToolSpec } from './chat-options.js';
import { sampleJson } from './json-sample.js';
import { openAiFinishReason, planGeneration, type FinishReason, type Plan } from './plan.js';
import { contentText } from './prompt-tokens.js';

/*
 * What a tool-capable chat model answers, deterministically, for the node and the provider:
 * - tools offered (tool_choice not "none") and no tool result since the last user message:
 *   one call, to the named function or the first tool, its arguments JSON sampled from the
 *   function's parameters schema;
 * - tool results since the last user message: text quoting every result verbatim;
 * - otherwise the seed's answer, or a JSON document when response_format asks for one.
 */

export type ChatReply =
  | { kind: 'content'; text: string; prefix: string }
  | { kind: 'tool_call'; id: string; name: string; arguments: string };

export interface ChatTurn extends ChatOptions {
  conversation: Conversation;
  /** Contents of the tool (and legacy function) results after the last user message. */
  toolResults: string[];
}

function toolResultsSinceUser(messages: readonly ChatMessageParam[]): string[] {
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  return messages
    .slice(lastUser + 1)
    .filter((m) => m.role === 'tool' || m.role === 'function')
    .map((m) => contentText(m.content));
}

export function readChatTurn(
  messages: readonly ChatMessageParam[],
  options: ChatOptions,
): ChatTurn {
  return {
    ...options,
    conversation: readConversation(messages),
    toolResults: toolResultsSinceUser(messages),
  };
}

function dueTool(turn: ChatTurn): ToolSpec | undefined {
  if (turn.tools.length === 0 || turn.toolChoice === 'none' || turn.toolResults.length > 0) {
    return undefined;
  }
  const choice = turn.toolChoice;
  return typeof choice === 'object'
    ? turn.tools.find((t) => t.name === choice.name)
    : turn.tools[0];
}

/** The answer after tool calls: each result verbatim, then a closing sentence. */
export function toolResultsAnswer(results: readonly string[], seedText: string): string {
  return `Based on the tool results: ${results.join('; ')}. ${shortSentence(seedText)}`;
}

function formatted(format: OutputFormat, seed: string, answer: string): string {
  if (format.type === 'text') return answer;
  const schema = format.type === 'json_schema' ? format.schema : { type: 'object' };
  return sampleJson(schema, `${seed}\u0000json`, answer);
}

function newCallId(): string {
  return `call_standin_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
}

/** The reply of choice `index`; a trailing assistant message continues content it starts. */
export function chatReply(turn: ChatTurn, index: number, length: AnswerLength): ChatReply {
  const seed = choiceSeed(turn.conversation.seedText, index);
  const tool = dueTool(turn);
  if (tool !== undefined) {
    const args = sampleJson(
      tool.parameters,
      `${seed}\u0000tool:${tool.name}`,
      answerText(seed, length),
    );
    return { kind: 'tool_call', id: newCallId(), name: tool.name, arguments: args };
  }
  const answer =
    turn.toolResults.length > 0
      ? toolResultsAnswer(turn.toolResults, seed)
      : answerText(seed, length);
  const text = formatted(turn.format, seed, answer);
  const { assistantPrefix } = turn.conversation;
  return { kind: 'content', text, prefix: text.startsWith(assistantPrefix) ? assistantPrefix : '' };
}

/**
 * Pieces of a reply under the output cap. A call's pieces are its arguments; its name is
 * generated too, so it counts as output and against the cap first.
 */
export function planReply(reply: ChatReply, maxTokens: number, stop: readonly string[]): Plan {
  if (reply.kind === 'content') {
    return planGeneration({
      answer: reply.text,
      prefix: reply.prefix,
      maxTokens,
      stop,
      keepStop: false,
    });
  }
  const nameTokens = Math.min(countTextTokens(reply.name), maxTokens);
  const plan = planGeneration({
    answer: reply.arguments,
    prefix: '',
    maxTokens: maxTokens - nameTokens,
    stop,
    keepStop: false,
  });
  return { ...plan, generatedTokens: plan.generatedTokens + nameTokens };
}

/** OpenAI's finish_reason: a call that ran to its end finishes with `tool_calls`. */
export function chatFinishReason(reply: ChatReply | undefined, reason: FinishReason): string {
  return reply?.kind === 'tool_call' && reason === 'stop'
    ? 'tool_calls'
    : openAiFinishReason(reason);
}

import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { AnswerLength } from './answer.js';
import {
  chatFinishReason,
  chatReply,
  planReply,
  readChatTurn,
  type ChatReply,
  type ChatTurn,
} from './chat-reply.js';
import { MAX_GENERATED_TOKENS } from './limits.js';
import { runSteps, type Pacing } from './pacing.js';
import type { FinishReason } from './plan.js';
import {
  REASONING_TOKENS_BY_EFFORT,
  validateProviderRequest,
  type ProviderRequest,
  type StandInProviderModel,
} from './provider-validate.js';
import { endSse, nowS, openSse, writeEvent } from './sse.js';
import { exchangeOf } from './traffic.js';

/*
 * POST /v1/chat/completions of the stand-in reasoning-model provider. Each choice first spends
 * reasoning tokens (invisible, but counted and timed against max_completion_tokens), then
 * answers or calls a tool as the node does (chat-reply.ts), or, when reasoning ate the budget,
 * returns '' with `length`.
 */

export interface ProviderBehaviour extends Pacing, AnswerLength {
  models: readonly StandInProviderModel[];
}

interface Choice {
  reasoningTokens: number;
  /** Content tokens, or the pieces of the call's arguments. */
  pieces: string[];
  toolCall: { id: string; name: string } | null;
  /** Visible tokens generated after reasoning. */
  outputTokens: number;
  finishReason: string;
}

function exhausted(reasoningTokens: number): Choice {
  return { reasoningTokens, pieces: [], toolCall: null, outputTokens: 0, finishReason: 'length' };
}

/** OpenAI ends a call that tool_choice named with `stop`, one the model chose with `tool_calls`. */
function finishReasonOf(turn: ChatTurn, reply: ChatReply, reason: FinishReason): string {
  const named = typeof turn.toolChoice === 'object';
  if (reply.kind === 'tool_call' && named && reason === 'stop') return 'stop';
  return chatFinishReason(reply, reason);
}

function planChoice(
  request: ProviderRequest,
  turn: ChatTurn,
  index: number,
  length: AnswerLength,
): Choice {
  const budget = Math.min(
    request.maxCompletionTokens ?? MAX_GENERATED_TOKENS,
    MAX_GENERATED_TOKENS,
  );
  const reasoningTokens = Math.min(REASONING_TOKENS_BY_EFFORT[request.effort], budget);
  const left = budget - reasoningTokens;
  if (left === 0) return exhausted(reasoningTokens);
  const reply = chatReply(turn, index, length);
  const plan = planReply(reply, left, []);
  return {
    reasoningTokens,
    pieces: plan.pieces,
    toolCall: reply.kind === 'tool_call' ? { id: reply.id, name: reply.name } : null,
    outputTokens: plan.generatedTokens,
    finishReason: finishReasonOf(turn, reply, plan.finishReason),
  };
}

function usageOf(promptTokens: number, choices: readonly Choice[]) {
  const reasoning = choices.reduce((sum, c) => sum + c.reasoningTokens, 0);
  const completion = choices.reduce((sum, c) => sum + c.reasoningTokens + c.outputTokens, 0);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function message(choice: Choice) {
  const call = choice.toolCall;
  if (call !== null) {
    const fn = { name: call.name, arguments: choice.pieces.join('') };
    const toolCalls = [{ id: call.id, type: 'function', function: fn }];
    return {
      role: 'assistant',
      content: null,
      tool_calls: toolCalls,
      refusal: null,
      annotations: [],
    };
  }
  return { role: 'assistant', content: choice.pieces.join(''), refusal: null, annotations: [] };
}

/** Visible steps of a choice: one per content or argument token; a call takes at least one. */
function visibleSteps(choice: Choice): number {
  return choice.toolCall !== null ? Math.max(1, choice.pieces.length) : choice.pieces.length;
}

/** Stream deltas of a choice at one visible step; a call's first one names it, like OpenAI's. */
function deltasAt(choice: Choice, visibleStep: number): object[] {
  const piece = choice.pieces[visibleStep];
  const call = choice.toolCall;
  if (call === null) return piece === undefined ? [] : [{ content: piece }];
  const args =
    piece === undefined ? [] : [{ tool_calls: [{ index: 0, function: { arguments: piece } }] }];
  if (visibleStep !== 0) return args;
  const fn = { name: call.name, arguments: '' };
  const opening = { index: 0, id: call.id, type: 'function', function: fn };
  return [{ role: 'assistant', content: null, tool_calls: [opening], refusal: null }, ...args];
}

interface Answer {
  request: ProviderRequest;
  choices: Choice[];
  usage: ReturnType<typeof usageOf>;
  head: Record<string, unknown>;
  reasoningSteps: number;
  steps: number;
}

function prepare(behaviour: ProviderBehaviour, body: unknown): Answer {
  const request = validateProviderRequest(body, behaviour.models);
  const turn = readChatTurn(request.messages, request.options);
  const choices = Array.from({ length: request.n }, (_, i) =>
    planChoice(request, turn, i, behaviour),
  );
  // Every choice reasons with the same effort, so the reasoning phase is shared.
  const reasoningSteps = choices[0]?.reasoningTokens ?? 0;
  return {
    request,
    choices,
    usage: usageOf(request.promptTokens, choices),
    head: {
      id: `chatcmpl-standin-${randomUUID()}`,
      created: nowS(),
      model: request.model,
      service_tier: 'default',
      system_fingerprint: null,
    },
    reasoningSteps,
    steps: reasoningSteps + Math.max(0, ...choices.map(visibleSteps)),
  };
}

async function answerWhole(behaviour: () => ProviderBehaviour, res: Response, answer: Answer) {
  const exchange = exchangeOf(res);
  const { choices, reasoningSteps } = answer;
  const visibleAt = (step: number) =>
    choices.filter((c) => deltasAt(c, step - reasoningSteps).length > 0).length;
  if (!(await runSteps(exchange, behaviour, answer.steps, visibleAt))) return;
  exchange.tokensSent = exchange.tokensGenerated;
  const body = choices.map((c, index) => ({
    index,
    message: message(c),
    logprobs: null,
    finish_reason: c.finishReason,
  }));
  res.json({ ...answer.head, object: 'chat.completion', choices: body, usage: answer.usage });
}

async function answerStream(behaviour: () => ProviderBehaviour, res: Response, answer: Answer) {
  const exchange = exchangeOf(res);
  const { choices, reasoningSteps, head } = answer;
  // With include_usage every chunk carries `usage: null` until the final usage chunk.
  const extra = answer.request.includeUsage ? { usage: null } : {};
  const chunk = (choice: object) =>
    writeEvent(res, { ...head, object: 'chat.completion.chunk', choices: [choice], ...extra });
  const delta = (index: number, content: object, finishReason: string | null = null) =>
    chunk({ index, delta: content, logprobs: null, finish_reason: finishReason });
  openSse(res);
  // Content choices announce the role at once; a call announces it with its first delta.
  choices.forEach((choice, index) => {
    if (choice.toolCall === null) delta(index, { role: 'assistant', content: '', refusal: null });
  });
  const completed = await runSteps(exchange, behaviour, answer.steps, (step) => {
    let sent = 0;
    choices.forEach((choice, index) => {
      const deltas = deltasAt(choice, step - reasoningSteps);
      deltas.forEach((content) => delta(index, content));
      if (deltas.length > 0) sent += 1;
    });
    exchange.tokensSent += sent;
    return sent;
  });
  if (!completed) return;
  choices.forEach((choice, index) => delta(index, {}, choice.finishReason));
  if (answer.request.includeUsage) {
    writeEvent(res, { ...head, object: 'chat.completion.chunk', choices: [], usage: answer.usage });
  }
  endSse(res, true);
}

export async function providerChat(
  behaviour: () => ProviderBehaviour,
  req: Request,
  res: Response,
): Promise<void> {
  const answer = prepare(behaviour(), req.body);
  await (answer.request.stream ? answerStream : answerWhole)(behaviour, res, answer);
}

import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { countChatPromptTokens, countTextTokens } from '@gateway/tokenizer';
import { choiceAnswer, readConversation, type AnswerLength, type Conversation } from './answer.js';
import { MAX_GENERATED_TOKENS } from './limits.js';
import { runSteps, type Pacing } from './pacing.js';
import { openAiFinishReason, planGeneration } from './plan.js';
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
 * answers, calls the forced tool, or, when reasoning ate the budget, returns '' with `length`.
 */

export interface ProviderBehaviour extends Pacing, AnswerLength {
  models: readonly StandInProviderModel[];
}

interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

interface Choice {
  reasoningTokens: number;
  pieces: string[];
  toolCall: ToolCall | null;
  /** Visible tokens generated after reasoning. */
  outputTokens: number;
  finishReason: string;
}

function exhausted(reasoningTokens: number, outputTokens: number): Choice {
  return { reasoningTokens, pieces: [], toolCall: null, outputTokens, finishReason: 'length' };
}

function planChoice(
  request: ProviderRequest,
  conversation: Conversation,
  index: number,
  length: AnswerLength,
): Choice {
  const budget = Math.min(
    request.maxCompletionTokens ?? MAX_GENERATED_TOKENS,
    MAX_GENERATED_TOKENS,
  );
  const reasoningTokens = Math.min(REASONING_TOKENS_BY_EFFORT[request.effort], budget);
  const left = budget - reasoningTokens;
  if (left === 0) return exhausted(reasoningTokens, 0);
  if (request.forcedTool !== null) {
    const { name, named } = request.forcedTool;
    const toolTokens = countTextTokens(name) + countTextTokens('{}');
    if (toolTokens > left) return exhausted(reasoningTokens, left);
    const toolCall: ToolCall = {
      id: `call_standin_${randomUUID().replaceAll('-', '')}`,
      type: 'function',
      function: { name, arguments: '{}' },
    };
    // A tool named by tool_choice finishes with `stop`; one the model was required to pick, `tool_calls`.
    return {
      reasoningTokens,
      pieces: [],
      toolCall,
      outputTokens: toolTokens,
      finishReason: named ? 'stop' : 'tool_calls',
    };
  }
  const plan = planGeneration({
    ...choiceAnswer(conversation, index, length),
    maxTokens: left,
    stop: [],
    keepStop: false,
  });
  return {
    reasoningTokens,
    pieces: plan.pieces,
    toolCall: null,
    outputTokens: plan.generatedTokens,
    finishReason: openAiFinishReason(plan.finishReason),
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
  if (choice.toolCall !== null) {
    return {
      role: 'assistant',
      content: null,
      tool_calls: [choice.toolCall],
      refusal: null,
      annotations: [],
    };
  }
  return { role: 'assistant', content: choice.pieces.join(''), refusal: null, annotations: [] };
}

/** Visible steps of a choice: one per content token, one for a whole tool call. */
function visibleSteps(choice: Choice): number {
  return choice.toolCall !== null ? 1 : choice.pieces.length;
}

/** Stream deltas of a choice at one visible step: a content token, or the whole tool call. */
function deltasAt(choice: Choice, visibleStep: number): object[] {
  const call = choice.toolCall;
  if (call !== null) {
    if (visibleStep !== 0) return [];
    const opening = { index: 0, ...call, function: { name: call.function.name, arguments: '' } };
    const args = { index: 0, function: { arguments: call.function.arguments } };
    return [{ tool_calls: [opening] }, { tool_calls: [args] }];
  }
  const piece = choice.pieces[visibleStep];
  return piece === undefined ? [] : [{ content: piece }];
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
  const conversation = readConversation(request.messages);
  const choices = Array.from({ length: request.n }, (_, i) =>
    planChoice(request, conversation, i, behaviour),
  );
  // Every choice reasons with the same effort, so the reasoning phase is shared.
  const reasoningSteps = choices[0]?.reasoningTokens ?? 0;
  return {
    request,
    choices,
    usage: usageOf(countChatPromptTokens(request.messages), choices),
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
  choices.forEach((_, index) => delta(index, { role: 'assistant', content: '', refusal: null }));
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

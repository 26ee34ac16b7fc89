import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { StandInHttpError, badRequest } from './errors.js';
import { MAX_CHOICES, MAX_GENERATED_TOKENS, MAX_STOP_SEQUENCES } from './limits.js';
import type { StandInNodeSettings } from './node-settings.js';
import { runSteps } from './pacing.js';
import {
  longestPlan,
  openAiFinishReason,
  totalGenerated,
  type FinishReason,
  type Plan,
} from './plan.js';
import { endSse, nowS, openSse, writeEvent } from './sse.js';
import { exchangeOf } from './traffic.js';
import {
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  optionalObject,
  stopSequences,
  type Body,
} from './validate.js';

/*
 * The OpenAI-compatible generation routes (chat and text completions) differ only in the
 * shape of a choice; validation, pacing, streaming and usage are shared here.
 */

export interface ChoiceShape {
  object: string;
  chunkObject: string;
  idPrefix: string;
  /** First chunk of a choice in a stream (chat announces the role), or null. */
  opening(index: number): unknown;
  delta(index: number, piece: string): unknown;
  closing(index: number, finishReason: string): unknown;
  whole(index: number, text: string, finishReason: string): unknown;
  /** The finish_reason a choice reports (default: OpenAI's `stop` / `length`). */
  finishReason?(index: number, reason: FinishReason): string;
}

export interface GenerationParams {
  model: string;
  n: number;
  maxTokens: number;
  stop: string[];
  stream: boolean;
  includeUsage: boolean;
}

export function servedModel(body: Body, settings: StandInNodeSettings): string {
  const model = body.model;
  if (typeof model !== 'string' || model.length === 0) {
    throw badRequest("Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  }
  if (settings.models !== null && !settings.models.includes(model)) {
    throw new StandInHttpError(
      404,
      `The model \`${model}\` does not exist.`,
      'model',
      'model_not_found',
    );
  }
  return model;
}

/** Output budget as vLLM computes it: what is left of the context window, capped. */
function outputBudget(requested: number | undefined, promptTokens: number, maxModelLen: number) {
  const asked = requested ?? 0;
  if (promptTokens + asked > maxModelLen || promptTokens >= maxModelLen) {
    throw badRequest(
      `This model's maximum context length is ${maxModelLen} tokens. However, you requested ` +
        `${promptTokens + asked} tokens (${promptTokens} in the messages, ${asked} in the ` +
        'completion). Please reduce the length of the messages or completion.',
      'max_tokens',
      'context_length_exceeded',
    );
  }
  return Math.min(requested ?? maxModelLen - promptTokens, MAX_GENERATED_TOKENS);
}

export function generationParams(
  body: Body,
  promptTokens: number,
  settings: StandInNodeSettings,
): GenerationParams {
  const requested =
    optionalInteger(body, 'max_completion_tokens', 1, Number.MAX_SAFE_INTEGER) ??
    optionalInteger(body, 'max_tokens', 1, Number.MAX_SAFE_INTEGER);
  optionalNumber(body, 'temperature', 0, 2);
  optionalNumber(body, 'top_p', 0, 1);
  const stream = optionalBoolean(body, 'stream') ?? false;
  const streamOptions = optionalObject(body, 'stream_options');
  if (streamOptions !== undefined && !stream) {
    throw badRequest('Stream options can only be defined when `stream=True`.', 'stream_options');
  }
  return {
    model: servedModel(body, settings),
    n: optionalInteger(body, 'n', 1, MAX_CHOICES) ?? 1,
    maxTokens: outputBudget(requested, promptTokens, settings.maxModelLen),
    stop: stopSequences(body, 'stop', MAX_STOP_SEQUENCES),
    stream,
    includeUsage: streamOptions?.include_usage === true,
  };
}

function usageOf(promptTokens: number, completionTokens: number) {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

function piecesAt(plans: readonly Plan[], step: number): number {
  return plans.filter((plan) => plan.pieces[step] !== undefined).length;
}

export async function respondWithPlans(
  res: Response,
  settings: () => StandInNodeSettings,
  shape: ChoiceShape,
  params: GenerationParams,
  promptTokens: number,
  plans: readonly Plan[],
): Promise<void> {
  const exchange = exchangeOf(res);
  const head = { id: `${shape.idPrefix}${randomUUID()}`, created: nowS(), model: params.model };
  const usage = usageOf(promptTokens, totalGenerated(plans));
  const finish = (plan: Plan, index: number) =>
    shape.finishReason?.(index, plan.finishReason) ?? openAiFinishReason(plan.finishReason);
  if (!params.stream) {
    const steps = longestPlan(plans);
    if (!(await runSteps(exchange, settings, steps, (step) => piecesAt(plans, step)))) return;
    exchange.tokensSent = exchange.tokensGenerated;
    const choices = plans.map((plan, i) => shape.whole(i, plan.pieces.join(''), finish(plan, i)));
    res.json({ ...head, object: shape.object, choices, usage });
    return;
  }
  const chunk = (choices: unknown[]) =>
    writeEvent(res, { ...head, object: shape.chunkObject, choices });
  openSse(res);
  plans.forEach((_, i) => {
    const opening = shape.opening(i);
    if (opening !== null) chunk([opening]);
  });
  const completed = await runSteps(exchange, settings, longestPlan(plans), (step) => {
    let sent = 0;
    plans.forEach((plan, i) => {
      const piece = plan.pieces[step];
      if (piece === undefined) return;
      chunk([shape.delta(i, piece)]);
      sent += 1;
    });
    exchange.tokensSent += sent;
    return sent;
  });
  if (!completed) return;
  plans.forEach((plan, i) => chunk([shape.closing(i, finish(plan, i))]));
  // The usage chunk of `stream_options.include_usage`: no choices, real counts.
  if (params.includeUsage)
    writeEvent(res, { ...head, object: shape.chunkObject, choices: [], usage });
  endSse(res, true);
}

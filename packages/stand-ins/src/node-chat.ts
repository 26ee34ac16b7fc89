import type { Request, Response } from 'express';
import { Router } from 'express';
import { countChatPromptTokens, countTextTokens } from '@gateway/tokenizer';
import { choiceAnswer, readConversation, type ChatMessage, type Conversation } from './answer.js';
import { badRequest } from './errors.js';
import { MAX_CHOICES } from './limits.js';
import { generationParams, respondWithPlans, type ChoiceShape } from './node-generation.js';
import type { StandInNodeSettings } from './node-settings.js';
import { planGeneration, type Plan } from './plan.js';
import { requireObject, requireString } from './validate.js';

/* POST /v1/chat/completions and POST /v1/completions of the stand-in model node (vLLM-like). */

const CHAT_SHAPE: ChoiceShape = {
  object: 'chat.completion',
  chunkObject: 'chat.completion.chunk',
  idPrefix: 'chatcmpl-standin-',
  opening: (index) => ({
    index,
    delta: { role: 'assistant', content: '' },
    logprobs: null,
    finish_reason: null,
  }),
  delta: (index, content) => ({ index, delta: { content }, logprobs: null, finish_reason: null }),
  closing: (index, reason) => ({ index, delta: {}, logprobs: null, finish_reason: reason }),
  whole: (index, content, reason) => ({
    index,
    message: { role: 'assistant', content },
    logprobs: null,
    finish_reason: reason,
  }),
};

/**
 * A chat answer given as a call of the function `tool_choice` names (vLLM's named function
 * calling): the answer's tokens stream as the call's arguments, after a delta naming the function.
 */
function toolCallShape(name: string): ChoiceShape {
  // The first delta of a call carries its id and type; the following ones only arguments.
  const call = (index: number, fn: Record<string, string>, first = false) => ({
    index: 0,
    ...(first ? { id: `call_standin_${index}`, type: 'function' } : {}),
    function: fn,
  });
  return {
    ...CHAT_SHAPE,
    opening: (index) => ({
      index,
      delta: { role: 'assistant', tool_calls: [call(index, { name, arguments: '' }, true)] },
      logprobs: null,
      finish_reason: null,
    }),
    delta: (index, piece) => ({
      index,
      delta: { tool_calls: [call(index, { arguments: piece })] },
      logprobs: null,
      finish_reason: null,
    }),
    whole: (index, text, reason) => ({
      index,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [call(index, { name, arguments: text }, true)],
      },
      logprobs: null,
      finish_reason: reason,
    }),
  };
}

/** The function a request forces with `tool_choice: {type: "function", function: {name}}`. */
function forcedFunction(body: Record<string, unknown>): string | undefined {
  const choice = body.tool_choice as { function?: { name?: unknown } } | undefined;
  const name = choice?.function?.name;
  return typeof name === 'string' && name.length > 0 ? name : undefined;
}

/** Fields a real chat template renders into the prompt besides the messages (billed as input). */
const RENDERED_FIELDS = ['tools', 'tool_choice', 'response_format', 'functions'] as const;

function renderedFieldTokens(body: Record<string, unknown>): number {
  return RENDERED_FIELDS.filter((name) => body[name] !== undefined)
    .map((name) => countTextTokens(JSON.stringify(body[name])))
    .reduce((sum, tokens) => sum + tokens, 0);
}

const TEXT_SHAPE: ChoiceShape = {
  object: 'text_completion',
  chunkObject: 'text_completion',
  idPrefix: 'cmpl-standin-',
  opening: () => null,
  delta: (index, text) => ({ index, text, logprobs: null, finish_reason: null }),
  closing: (index, reason) => ({ index, text: '', logprobs: null, finish_reason: reason }),
  whole: (index, text, reason) => ({ index, text, logprobs: null, finish_reason: reason }),
};

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const MAX_PROMPT_CHARS = 4 * 1024 * 1024;
const LEGACY_COMPLETIONS_MAX_TOKENS = 16;

export function chatMessages(value: unknown): ChatMessage[] {
  if (!Array.isArray(value) || value.length === 0) {
    throw badRequest(
      "Invalid 'messages': expected a non-empty array.",
      'messages',
      'invalid_value',
    );
  }
  value.forEach((message: unknown, index) => {
    const role = (message as { role?: unknown } | null)?.role;
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw badRequest(
        `Invalid 'messages[${index}].role'.`,
        `messages[${index}].role`,
        'invalid_value',
      );
    }
  });
  return value as ChatMessage[];
}

export function plansFor(
  conversation: Conversation,
  n: number,
  maxTokens: number,
  stop: readonly string[],
  settings: StandInNodeSettings,
): Plan[] {
  return Array.from({ length: Math.min(n, MAX_CHOICES) }, (_, index) =>
    planGeneration({
      ...choiceAnswer(conversation, index, settings),
      maxTokens,
      stop,
      keepStop: false,
    }),
  );
}

async function chat(settings: () => StandInNodeSettings, req: Request, res: Response) {
  const body = requireObject(req.body);
  const messages = chatMessages(body.messages);
  const promptTokens = countChatPromptTokens(messages) + renderedFieldTokens(body);
  const current = settings();
  const params = generationParams(body, promptTokens, current);
  const plans = plansFor(
    readConversation(messages),
    params.n,
    params.maxTokens,
    params.stop,
    current,
  );
  const forced = forcedFunction(body);
  const shape = forced === undefined ? CHAT_SHAPE : toolCallShape(forced);
  await respondWithPlans(res, settings, shape, params, promptTokens, plans);
}

async function completion(settings: () => StandInNodeSettings, req: Request, res: Response) {
  const body = requireObject(req.body);
  if (Array.isArray(body.prompt)) {
    throw badRequest('The stand-in model node takes one prompt string per request.', 'prompt');
  }
  const prompt = requireString(body, 'prompt', MAX_PROMPT_CHARS);
  const promptTokens = countTextTokens(prompt);
  const current = settings();
  // vLLM keeps the legacy completions default of 16 tokens when max_tokens is absent.
  const withDefault = { max_tokens: LEGACY_COMPLETIONS_MAX_TOKENS, ...body };
  const params = generationParams(withDefault, promptTokens, current);
  const conversation = { seedText: prompt, assistantPrefix: '' };
  const plans = plansFor(conversation, params.n, params.maxTokens, params.stop, current);
  await respondWithPlans(res, settings, TEXT_SHAPE, params, promptTokens, plans);
}

export function chatRoutes(settings: () => StandInNodeSettings): Router {
  const router = Router();
  router.post('/v1/chat/completions', (req, res) => chat(settings, req, res));
  router.post('/v1/completions', (req, res) => completion(settings, req, res));
  return router;
}

import type { Request, Response } from 'express';
import { Router } from 'express';
import { countTextTokens } from '@gateway/tokenizer';
import { choiceAnswer, type Conversation } from './answer.js';
import { validateChatMessages } from './chat-messages.js';
import { readChatOptions } from './chat-options.js';
import {
  chatFinishReason,
  chatReply,
  planReply,
  readChatTurn,
  type ChatReply,
} from './chat-reply.js';
import { badRequest } from './errors.js';
import { MAX_CHOICES } from './limits.js';
import { generationParams, respondWithPlans, type ChoiceShape } from './node-generation.js';
import type { StandInNodeSettings } from './node-settings.js';
import { planGeneration, type Plan } from './plan.js';
import { chatPromptTokens } from './prompt-tokens.js';
import { requireObject, requireString } from './validate.js';

/* POST /v1/chat/completions and POST /v1/completions of the stand-in model node (vLLM-like). */

const CHAT_OBJECTS = {
  object: 'chat.completion',
  chunkObject: 'chat.completion.chunk',
  idPrefix: 'chatcmpl-standin-',
};

type ToolCallReply = Extract<ChatReply, { kind: 'tool_call' }>;

const choiceDelta = (index: number, delta: object) => ({
  index,
  delta,
  logprobs: null,
  finish_reason: null,
});

/** A call's first delta names it (id, type, name); later ones carry pieces of its arguments. */
function callOpening(call: ToolCallReply) {
  const fn = { name: call.name, arguments: '' };
  return {
    role: 'assistant',
    tool_calls: [{ index: 0, id: call.id, type: 'function', function: fn }],
  };
}

function callMessage(call: ToolCallReply, args: string) {
  const fn = { name: call.name, arguments: args };
  return {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: call.id, type: 'function', function: fn }],
  };
}

/** Chat choices as vLLM writes them: content, or one tool call whose arguments stream. */
function chatShape(replies: readonly ChatReply[]): ChoiceShape {
  const callOf = (index: number) => {
    const reply = replies[index];
    return reply?.kind === 'tool_call' ? reply : undefined;
  };
  return {
    ...CHAT_OBJECTS,
    opening: (index) => {
      const call = callOf(index);
      return choiceDelta(index, call ? callOpening(call) : { role: 'assistant', content: '' });
    },
    delta: (index, piece) =>
      choiceDelta(
        index,
        callOf(index)
          ? { tool_calls: [{ index: 0, function: { arguments: piece } }] }
          : { content: piece },
      ),
    closing: (index, reason) => ({ index, delta: {}, logprobs: null, finish_reason: reason }),
    whole: (index, text, reason) => {
      const call = callOf(index);
      const message = call ? callMessage(call, text) : { role: 'assistant', content: text };
      return { index, message, logprobs: null, finish_reason: reason };
    },
    finishReason: (index, reason) => chatFinishReason(replies[index], reason),
  };
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

const MAX_PROMPT_CHARS = 4 * 1024 * 1024;
const LEGACY_COMPLETIONS_MAX_TOKENS = 16;

function plansFor(
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
  const messages = validateChatMessages(body.messages);
  const turn = readChatTurn(messages, readChatOptions(body));
  const promptTokens = chatPromptTokens(messages, body);
  const current = settings();
  const params = generationParams(body, promptTokens, current);
  const replies = Array.from({ length: params.n }, (_, i) => chatReply(turn, i, current));
  const plans = replies.map((reply) => planReply(reply, params.maxTokens, params.stop));
  await respondWithPlans(res, settings, chatShape(replies), params, promptTokens, plans);
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

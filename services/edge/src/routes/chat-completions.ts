import { randomUUID } from 'node:crypto';
import express, { type Response, type Router } from 'express';
import {
  PUBLIC_ROUTES,
  chatMediaUse,
  GATEWAY_CHAT_PARAMETERS,
  NODE_DROPPED_CHAT_PARAMETERS,
  toErrorBody,
  unsupportedNodeChatParameter,
  validateChatCompletion,
} from '@gateway/contracts';
import type { ChatCompletionRequest } from '@gateway/contracts';
import type { Logger } from '@gateway/observability';
import { asGatewayError } from '@gateway/runtime';
import { estimateChatRequestTokens } from '@gateway/tokenizer';
import type { EdgeDeps } from '../deps.js';
import { sendJson } from '../http/send-answer.js';
import { credentialRequired } from '../http/auth.js';
import { openEventStream, writeFrame } from '../http/event-stream.js';
import { jsonBody, logOf } from '../http/context.js';
import { mountPublicRoute, refuseOtherMethods } from '../http/public-route.js';
import type { JobReply, RunningJob } from '../jobs/job-replies.js';
import { omit } from '../jobs/inference-jobs.js';
import { inferenceHandler, spendBeforeStreaming, type InferencePlan } from './inference-flow.js';
import { serviceBlock } from './service-block.js';

/** `POST /v1/chat/completions`: JSON, or SSE with `stream: true`. */
export function chatCompletionsRouter(deps: EdgeDeps): Router {
  const router = express.Router();
  const credential = credentialRequired(deps.authFailures);
  const handler = inferenceHandler<ChatCompletionRequest>(deps, {
    validate: (body) => validateChatCompletion(body),
    plan: (body) => chatPlan(body),
    answer: (res, final, guard) =>
      sendJson(res, 200, { ...final.data, _service: serviceBlock(final) }, guard),
    relay: async (req, res, job, guard) => {
      const first = await job.next();
      // From the first byte on, the request may be charged and cannot be replayed.
      await spendBeforeStreaming(guard, job);
      await relayStream(res, job, first, logOf(req));
    },
  });
  const route = PUBLIC_ROUTES.chatCompletions;
  mountPublicRoute(router, route, [credential], ...jsonBody(deps.limits.jsonBodyBytes), handler);
  refuseOtherMethods(router, route.path, [credential]);
  return router;
}

/**
 * The hold is sized for the prompt (real tokenizer, counted without holding the event loop) plus
 * `n` × the output cap. The prompt is everything the model reads: the messages (tool calls and
 * results included) and the JSON text of every other field that reaches it (tools, tool_choice,
 * response_format, ...), so the hold bounds what the node will bill. Images are not text: billing
 * adds the model's per-image ceiling for each at admission, where it also refuses content the
 * model does not declare.
 */
export async function chatPlan(
  body: ChatCompletionRequest,
  jobId = `chatcmpl-${randomUUID()}`,
): Promise<InferencePlan> {
  const refused = unsupportedNodeChatParameter(body);
  const media = chatMediaUse(body.messages);
  // Spec: `webhook` is silently ignored here; the worker never sees it.
  return {
    endpoint: 'chat.completions',
    jobId,
    model: body.model,
    estimate: {
      inputTokens: await estimateChatRequestTokens(body.messages, modelReadFields(body)),
      maxOutputTokens: body.max_completion_tokens ?? body.max_tokens ?? null,
      choices: body.n ?? 1,
    },
    priority: body.service_tier === 'priority',
    stream: body.stream === true,
    request: omit(body, 'webhook'),
    kinds: ['chat', 'completion'],
    ...(refused === undefined ? {} : { nodeUnsupportedParameter: refused }),
    ...(media.kinds.length === 0 ? {} : { media }),
  };
}

/**
 * The fields besides `messages` that reach the model (the gateway's own are not sent as is, and
 * the cost-free ones nodes do not take reach no model: the external provider drops them too).
 */
function modelReadFields(body: ChatCompletionRequest): Record<string, unknown> {
  const gateway = new Set<string>([
    ...GATEWAY_CHAT_PARAMETERS,
    ...NODE_DROPPED_CHAT_PARAMETERS,
    'messages',
  ]);
  return Object.fromEntries(Object.entries(body).filter(([name]) => !gateway.has(name)));
}

/**
 * Server-sent events of a chat stream, data-only in the OpenAI chunk shape: one
 * `data: <json>\n\n` per chunk, the final usage chunk, then `data: [DONE]\n\n`. Headers go out
 * only with the first reply, so anything refused before it is an ordinary JSON error with its
 * status. An error after that is one `data: {"error": {...}}` event, then `[DONE]` (decisions §3).
 */
export async function relayStream(
  res: Response,
  job: RunningJob,
  first: JobReply,
  log: Logger,
): Promise<void> {
  openEventStream(res);
  let reply = first;
  try {
    for (;;) {
      if (reply.type === 'final') {
        await writeEvent(res, JSON.stringify(finalChunk(reply)));
        break;
      }
      await writeEvent(res, JSON.stringify(reply.data ?? {}));
      reply = await job.next();
    }
  } catch (error) {
    if (job.cancelledByClient) return;
    const gatewayError = asGatewayError(error);
    log.warn({ jobId: job.jobId, code: gatewayError.code }, 'stream failed after it started');
    await writeEvent(res, JSON.stringify(toErrorBody(gatewayError)));
  }
  await writeEvent(res, '[DONE]');
  res.end();
}

/**
 * The final chunk, its `usage` extended with the request's cost (as peers extend the
 * usage object): `cost_dzd` is what the settlement charged, or, with `settlement: 'pending'`
 * (billing was unreachable), what the queued settlement will charge; the hold id makes the
 * receipt findable. A final reply without a cost (or without usage) is relayed as it is.
 */
export function finalChunk(reply: JobReply): Record<string, unknown> {
  const data = reply.data ?? {};
  const usage = data.usage;
  const service = serviceBlock(reply);
  if (service.cost_dzd === undefined || typeof usage !== 'object' || usage === null) return data;
  return {
    ...data,
    usage: {
      ...usage,
      cost_dzd: service.cost_dzd,
      ...(service.settlement ? { settlement: service.settlement } : {}),
    },
  };
}

/** One `data:` event of the chat stream. */
function writeEvent(res: Response, data: string): Promise<void> {
  return writeFrame(res, `data: ${data}\n\n`);
}

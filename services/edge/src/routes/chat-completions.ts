import { randomUUID } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import {
  chatMediaUse,
  GATEWAY_CHAT_PARAMETERS,
  NODE_DROPPED_CHAT_PARAMETERS,
  unsupportedNodeChatParameter,
  validateChatCompletion,
} from '@gateway/contracts';
import type { ChatCompletionRequest } from '@gateway/contracts';
import { estimateChatRequestTokens } from '@gateway/tokenizer';
import type { EdgeDeps } from '../deps.js';
import { jsonBody } from '../http/body.js';
import { credentialRequired } from '../http/auth.js';
import { logOf } from '../http/context.js';
import { methodNotAllowed } from '../http/errors.js';
import type { IdempotencyGuard } from '../http/idempotency.js';
import { sendJson } from '../http/respond.js';
import type { RunningJob } from '../jobs/running-job.js';
import { admit, settleGuard, startJob, type InferencePlan } from './inference-flow.js';
import { serviceBlock } from './service-block.js';
import { relayStream } from './sse.js';
import { omit } from '../omit.js';

/** `POST /v1/chat/completions`: JSON, or SSE with `stream: true`. */
export function chatCompletionsRouter(deps: EdgeDeps): Router {
  const router = express.Router();
  const credential = credentialRequired(deps.authFailures);
  router.post(
    '/chat/completions',
    credential,
    ...jsonBody(deps.limits.jsonBodyBytes),
    async (req, res) => {
      const plan = await chatPlan(validateChatCompletion(req.body));
      const guard = await deps.idempotency.begin(req, res, req.body);
      if (guard === 'replayed') return;
      if (plan.stream) await streamed(deps, req, res, plan, guard);
      else await answered(deps, req, res, plan, guard);
    },
  );
  router.all('/chat/completions', credential, methodNotAllowed(['POST']));
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
export async function chatPlan(body: ChatCompletionRequest): Promise<InferencePlan> {
  const refused = unsupportedNodeChatParameter(body);
  const media = chatMediaUse(body.messages);
  // Spec: `webhook` is silently ignored here; the worker never sees it.
  return {
    endpoint: 'chat.completions',
    jobId: `chatcmpl-${randomUUID()}`,
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

async function answered(
  deps: EdgeDeps,
  req: Request,
  res: Response,
  plan: InferencePlan,
  guard: IdempotencyGuard | null,
): Promise<void> {
  let job: RunningJob | undefined;
  try {
    job = await startJob(deps, req, res, plan, await admit(deps, req, res, plan));
    const final = await job.final();
    await sendJson(res, 200, { ...final.data, _service: serviceBlock(final) }, guard);
  } catch (error) {
    await settleGuard(guard, job);
    throw error;
  }
}

async function streamed(
  deps: EdgeDeps,
  req: Request,
  res: Response,
  plan: InferencePlan,
  guard: IdempotencyGuard | null,
): Promise<void> {
  let job: RunningJob | undefined;
  try {
    job = await startJob(deps, req, res, plan, await admit(deps, req, res, plan));
    const first = await job.next();
    // From the first byte on, the request may be charged and cannot be replayed.
    await guard?.spend('A streamed response cannot be replayed; use a new Idempotency-Key.');
    await relayStream(res, job, first, logOf(req));
  } catch (error) {
    await settleGuard(guard, job);
    throw error;
  }
}

import { randomUUID } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import {
  GatewayError,
  isSafePathSegment,
  isValidModelId,
  microDzdToDzd,
  MODEL_ID_RULE,
  PUBLIC_ROUTES,
  validateNativeInference,
} from '@gateway/contracts';
import type { NativeInferenceRequest } from '@gateway/contracts';
import { currentRequestId } from '@gateway/runtime';
import { estimateTextTokens } from '@gateway/tokenizer';
import type { EdgeDeps } from '../deps.js';
import { credentialRequired } from '../http/auth.js';
import { jsonBody, logOf } from '../http/context.js';
import { mountPublicRoute, refuseOtherMethods } from '../http/public-route.js';
import { sendJson } from '../http/send-answer.js';
import type { IdempotencyGuard } from '../http/idempotency.js';
import { admit, settleGuard, inferenceHandler, type InferencePlan } from './inference-flow.js';
import { serviceBlock } from './service-block.js';
import { checkWebhookUrl } from './webhook-url.js';
import { omit } from '../jobs/inference-jobs.js';

/**
 * `POST /v1/inference/{model}` (the model id contains `/`). Without `webhook`: the synchronous
 * answer of decisions §3. With it: the acknowledgement at once; the worker's completion reaches
 * the dispatcher, which delivers the webhook. Default models only.
 */
export function nativeInferenceRouter(deps: EdgeDeps): Router {
  const router = express.Router();
  const sync = inferenceHandler<NativeInferenceRequest>(deps, {
    validate: (body) => validateNativeInference(body),
    plan: (request, req) => nativePlan(request, modelFromPath(req)),
    answer: (res, final, guard) =>
      sendJson(res, 200, { ...final.data, _service: serviceBlock(final) }, guard),
  });
  const credential = credentialRequired(deps.authFailures);
  const route = PUBLIC_ROUTES.nativeInference;
  const body = jsonBody(deps.limits.jsonBodyBytes);
  mountPublicRoute(router, route, [credential], ...body, async (req, res, next) => {
    const request = validateNativeInference(req.body);
    if (request.webhook === undefined) {
      await sync(req, res, next);
      return;
    }
    const webhookUrl = checkWebhookUrl(request.webhook, deps.limits.webhookAllowInsecure);
    const guard = await deps.idempotency.begin(req, res, req.body);
    if (guard === 'replayed') return;
    const plan = await nativePlan(request, modelFromPath(req));
    await queued(deps, req, res, plan, webhookUrl, guard);
  });
  refuseOtherMethods(router, route.path, [credential]);
  return router;
}

/**
 * The catalog id in a `*model` path. Express has decoded each segment; one that held an encoded
 * separator or escape (`x%2Fy`, `%252e`), or a dot segment, names no model (and must never reach
 * an internal URL).
 */
export function modelFromPath(req: Request): string {
  const raw = (req.params as { model?: unknown }).model;
  const segments = Array.isArray(raw) ? raw.map(String) : [String(raw ?? '')];
  const id = segments.join('/');
  if (id === '') throw new GatewayError('missing_model', 'model is required', { param: 'model' });
  if (!segments.every(isSafePathSegment) || !isValidModelId(id)) {
    throw new GatewayError('model_not_found', `Model not found: ${MODEL_ID_RULE}`, {
      param: 'model',
    });
  }
  return id;
}

async function nativePlan(request: NativeInferenceRequest, model: string): Promise<InferencePlan> {
  const inputTokens = await estimateTextTokens(
    request.input !== undefined ? [request.input] : (request.inputs ?? []),
  );
  return {
    endpoint: 'native',
    jobId: `inf-${randomUUID()}`,
    model,
    estimate: {
      inputTokens,
      maxOutputTokens: request.parameters?.max_new_tokens ?? null,
      choices: 1,
    },
    priority: false,
    stream: false,
    request: omit(request, 'webhook'),
    providers: ['node'],
    kinds: ['chat', 'completion', 'embedding'],
  };
}

/** The acknowledgement of an async job (spec): id, queued, the hold reserved for it. */
async function queued(
  deps: EdgeDeps,
  req: Request,
  res: Response,
  plan: InferencePlan,
  webhookUrl: string,
  guard: IdempotencyGuard | null,
): Promise<void> {
  try {
    const admission = await admit(deps, req, res, plan);
    await deps.jobs.submitAsync(plan, admission, webhookUrl, logOf(req), currentRequestId());
    const ack = {
      id: plan.jobId,
      model: admission.model.id,
      inference_status: { status: 'queued' },
      _service: {
        reserved_dzd: microDzdToDzd(admission.hold.amountMicroDzd),
        status: 'pending_settlement',
        hold_id: admission.hold.id,
      },
    };
    // The job is queued: its webhook is delivered whether or not the ack was kept for the key.
    await sendJson(res, 200, ack, guard, { sendUnkept: true });
  } catch (error) {
    await settleGuard(guard, undefined);
    throw error;
  }
}

import type { Request, RequestHandler, Response } from 'express';
import type { Admission } from '@gateway/billing-client';
import { GatewayError } from '@gateway/contracts';
import { currentRequestId } from '@gateway/runtime';
import type { ChatMediaUse, InferenceEndpoint, ModelKind, ModelProvider } from '@gateway/contracts';
import type { EdgeDeps } from '../deps.js';
import { noteAuthentication } from '../http/auth.js';
import { callerOf, logOf, stateOf } from '../http/context.js';
import type { IdempotencyGuard } from '../http/idempotency.js';
import { applyRateLimit } from '../http/rate-limit-headers.js';
import type { JobReply, RunningJob } from '../jobs/running-job.js';

/** One inference request as a route planned it, before admission. */
export interface InferencePlan {
  endpoint: InferenceEndpoint;
  jobId: string;
  model: string;
  estimate: { inputTokens: number; maxOutputTokens: number | null; choices: number };
  priority: boolean;
  stream: boolean;
  /** What the worker receives as `request`. */
  request: Record<string, unknown>;
  /** Default-models-only routes: `['node']`. */
  providers?: ModelProvider[];
  kinds?: ModelKind[];
  /** Chat: the first parameter outside the default-model table; billing refuses it on nodes. */
  nodeUnsupportedParameter?: string;
  /** Chat: content beyond text; billing refuses kinds the model does not declare. */
  media?: ChatMediaUse;
}

/**
 * Billing's admission, from the client's credential itself, in one call: authentication,
 * suspension, token state, rate limit, model (of a provider and kind this endpoint serves), the
 * token's model list, budget and balance, and the hold for the worst case — in the order of the
 * spec's error table. Idempotent on the hold id (the job id), so a lost answer is retried safely.
 */
export async function admit(deps: EdgeDeps, req: Request, res: Response, plan: InferencePlan) {
  deps.jobs.assertReady();
  const requestId = currentRequestId();
  let admission: Admission;
  try {
    admission = await deps.billing.admit({
      ...(req.get('Authorization') === undefined
        ? {}
        : { authorization: req.get('Authorization') }),
      holdId: plan.jobId,
      model: plan.model,
      estimate: plan.estimate,
      priority: plan.priority,
      ...(plan.providers ? { providers: plan.providers } : {}),
      ...(plan.kinds ? { kinds: plan.kinds } : {}),
      ...(plan.nodeUnsupportedParameter === undefined
        ? {}
        : { nodeUnsupportedParameter: plan.nodeUnsupportedParameter }),
      ...(plan.media === undefined ? {} : { media: plan.media }),
      // Kept on the hold for the request's usage record.
      endpoint: plan.endpoint,
      ...(requestId ? { requestId } : {}),
    });
  } catch (error) {
    await noteAuthentication(req, res, deps.authFailures, error);
    throw error;
  }
  deps.authFailures.accepted(req);
  stateOf(res).caller = admission.caller;
  applyRateLimit(res, admission.rateLimit);
  return admission;
}

/** Publishes the job; a client that disconnects before the answer is complete cancels it. */
export async function startJob(
  deps: EdgeDeps,
  req: Request,
  res: Response,
  plan: InferencePlan,
  admission: Admission,
): Promise<RunningJob> {
  // The client may have left while billing admitted it: no model call for nobody.
  if (res.closed) await voidAbandoned(deps, req, admission);
  const job = await deps.jobs.start(
    {
      jobId: plan.jobId,
      endpoint: plan.endpoint,
      caller: callerOf(res),
      admission,
      priority: plan.priority,
      stream: plan.stream,
      request: plan.request,
      promptTokens: plan.estimate.inputTokens,
    },
    logOf(req),
  );
  const cancelIfGone = () => {
    if (!res.writableFinished) job.cancel();
  };
  // 'close' may already have fired while the job was being published: it is not replayed.
  if (res.closed) cancelIfGone();
  else res.once('close', cancelIfGone);
  return job;
}

async function voidAbandoned(deps: EdgeDeps, req: Request, admission: Admission): Promise<never> {
  await deps.billing.void(admission.hold.id, { outcome: 'cancelled' }).catch((error: unknown) => {
    logOf(req).error({ err: error }, 'hold of an abandoned request not voided; it will expire');
  });
  throw new GatewayError('GATEWAY_TIMEOUT', 'The client went away before the job was queued.');
}

/**
 * After a failure the key is released only when the request charged nothing: a job the client
 * cancelled, or one edge gave up on without knowing its hold voided or refunded, may have been
 * charged, so its key is spent (a retry gets 409; it never runs and is charged twice).
 */
export async function settleGuard(guard: IdempotencyGuard | null, job: RunningJob | undefined) {
  if (job?.cancelledByClient) {
    await guard?.spend('The request with this Idempotency-Key was cancelled by the client.');
  } else if (job?.chargeAfterGivingUp === 'maybe') {
    await guard?.spend(
      'The request with this Idempotency-Key may have been charged but its answer was lost; use a new key.',
    );
  } else {
    await guard?.release();
  }
}

/** A synchronous JSON route: validate → idempotency → admit → job → final reply → answer. */
export interface SyncRoute<T> {
  validate(body: unknown, req: Request): T;
  plan(request: T, req: Request): Promise<InferencePlan>;
  /** Sends the answer from the final reply (through the guard, for replays). */
  answer(res: Response, final: JobReply, guard: IdempotencyGuard | null): Promise<void>;
  /** What identifies the request for its Idempotency-Key; the JSON body by default. */
  fingerprint?(req: Request): unknown;
}

export function syncInferenceHandler<T>(deps: EdgeDeps, route: SyncRoute<T>): RequestHandler {
  return async (req, res) => {
    const request = route.validate(req.body, req);
    const plan = await route.plan(request, req);
    const guard = await deps.idempotency.begin(req, res, route.fingerprint?.(req) ?? req.body);
    if (guard === 'replayed') return;
    let job: RunningJob | undefined;
    try {
      job = await startJob(deps, req, res, plan, await admit(deps, req, res, plan));
      await route.answer(res, await job.final(), guard);
    } catch (error) {
      await settleGuard(guard, job);
      throw error;
    }
  };
}

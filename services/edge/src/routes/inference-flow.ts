import type { Request, RequestHandler, Response } from 'express';
import type { Admission } from '@gateway/billing-client';
import { GatewayError, holdIdOfJob } from '@gateway/contracts';
import { currentRequestId } from '@gateway/runtime';
import type { EdgeDeps } from '../deps.js';
import { noteAuthentication } from '../http/auth.js';
import { applyRateLimit, logOf, stateOf } from '../http/context.js';
import type { IdempotencyGuard } from '../http/idempotency.js';
import type { InferencePlan } from '../jobs/inference-jobs.js';
import type { JobReply, RunningJob } from '../jobs/job-replies.js';

export type { InferencePlan } from '../jobs/inference-jobs.js';

/**
 * The plan admitted by billing (`InferenceJobs.admit`), with what HTTP adds: the credential
 * from the request, the failed-authentication count, the caller and the rate-limit headers.
 */
export async function admit(deps: EdgeDeps, req: Request, res: Response, plan: InferencePlan) {
  const authorization = req.get('Authorization');
  const requestId = currentRequestId();
  let admission: Admission;
  try {
    admission = await deps.jobs.admit(plan, {
      ...(authorization === undefined ? {} : { authorization }),
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
  const job = await deps.jobs.start(plan, admission, logOf(req), currentRequestId());
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
  // The guard logs what it could not keep; the lease then ends the claim.
  const spend = (message: string) => guard?.spend(message).catch(() => undefined);
  if (guard?.claimLost) {
    // Billing ended the lapsed claim (refunding its hold) before the answer was kept: the
    // answer was not sent, so whatever the job charged since is released too.
    await job?.abandon();
  } else if (job?.cancelledByClient) {
    await spend('The request with this Idempotency-Key was cancelled by the client.');
  } else if (job?.chargeAfterGivingUp === 'maybe') {
    await spend(
      'The request with this Idempotency-Key may have been charged but its answer was lost; use a new key.',
    );
  } else {
    await guard?.release();
  }
}

/**
 * Spends the key before a stream's first byte (a stream cannot be replayed). When that fails,
 * nothing is relayed: the job is abandoned (its hold voided or refunded) and the error thrown.
 */
export async function spendBeforeStreaming(
  guard: IdempotencyGuard | null,
  job: RunningJob,
): Promise<void> {
  try {
    await guard?.spend('A streamed response cannot be replayed; use a new Idempotency-Key.');
  } catch (error) {
    await job.abandon();
    throw error;
  }
}

/** An inference route: validate → plan → idempotency → admit → job → answer. */
export interface InferenceRoute<T> {
  validate(body: unknown, req: Request): T;
  plan(request: T, req: Request): Promise<InferencePlan>;
  /** Sends the answer from the final reply (through the guard, for replays). */
  answer(res: Response, final: JobReply, guard: IdempotencyGuard | null): Promise<void>;
  /** A plan with `stream`: relays the job's replies from the first one on, instead of `answer`. */
  relay?(
    req: Request,
    res: Response,
    job: RunningJob,
    guard: IdempotencyGuard | null,
  ): Promise<void>;
  /** What identifies the request for its Idempotency-Key; the JSON body by default. */
  fingerprint?(req: Request): unknown;
}

/** The one request flow of every job route, synchronous or streamed. */
export function inferenceHandler<T>(deps: EdgeDeps, route: InferenceRoute<T>): RequestHandler {
  return async (req, res) => {
    const request = route.validate(req.body, req);
    const plan = await route.plan(request, req);
    const fingerprint = route.fingerprint?.(req) ?? req.body;
    const guard = await deps.idempotency.begin(req, res, fingerprint, holdIdOfJob(plan.jobId));
    if (guard === 'replayed') return;
    let job: RunningJob | undefined;
    try {
      job = await startJob(deps, req, res, plan, await admit(deps, req, res, plan));
      if (plan.stream && route.relay) await route.relay(req, res, job, guard);
      else await route.answer(res, await job.final(), guard);
    } catch (error) {
      await settleGuard(guard, job);
      throw error;
    }
  };
}

/*
 * `POST /v1/responses`: the Responses request rebuilt as a chat completion and run as one
 * (validation, hold, job, settlement: the chat path's, unchanged), its answer translated back
 * and, with `store` (the default), saved before the client sees it, so the very next request on
 * any edge replica can continue it.
 */
import type { Request, RequestHandler, Response } from 'express';
import { holdIdOfJob, validateResponses, type Caller } from '@gateway/contracts';
import { asGatewayError } from '@gateway/runtime';
import type { EdgeDeps } from '../deps.js';
import { credentialOf, identifier } from '../http/auth.js';
import { logOf } from '../http/context.js';
import { openEventStream, writeFrame } from '../http/event-stream.js';
import { sendJson } from '../http/send-answer.js';
import type { IdempotencyGuard } from '../http/idempotency.js';
import { checkWebhookUrl } from '../routes/webhook-url.js';
import type { JobReply, RunningJob } from '../jobs/job-replies.js';
import { chatPlan } from '../routes/chat-completions.js';
import { admit, settleGuard, spendBeforeStreaming, startJob } from '../routes/inference-flow.js';
import { serviceBlock } from '../routes/service-block.js';
import { assertBackgroundServed, queuedResponse, type ReleaseSlot } from './background-response.js';
import { conversationOf, needsStoredState, readerOf, type Conversation } from './conversation.js';
import { invalidInput, normalizeInput } from './input-items.js';
import { rebuiltChatRequest } from './chat-request-of.js';
import { ResponseEvents, type ResponseEvent } from './response-events.js';
import { newResponseId } from './response-ids.js';
import {
  endingOf,
  outputItemsOf,
  responseObject,
  usageOf,
  type ResponseShell,
} from './response-object.js';
import { saveResponse } from './save-response.js';

type Json = Record<string, unknown>;

export function createResponseHandler(deps: EdgeDeps): RequestHandler {
  const callerOf = identifier(deps.billing, deps.authFailures);
  return async (req, res) => {
    const request = validateResponses(req.body);
    assertBackgroundServed(request);
    const webhookUrl =
      request.webhook === undefined
        ? undefined
        : checkWebhookUrl(request.webhook, deps.limits.webhookAllowInsecure);
    const items = normalizeInput(request.input);
    if (items.length === 0 && request.previous_response_id === undefined) {
      throw invalidInput('input is required (a string or at least one item)', 'input');
    }
    // Claimed before stored state is read: a retry is answered from the key even if what it
    // continued has since been deleted.
    const guard = await deps.idempotency.begin(req, res, req.body);
    if (guard === 'replayed') return;
    let job: RunningJob | undefined;
    // A background run's slot, taken before admission; the run owns it once it is stored.
    const background = request.background === true ? { release: noSlot, stored: false } : null;
    try {
      if (background) background.release = deps.background.reserve();
      let conversation: Conversation = { history: [], input: items };
      if (needsStoredState(request.previous_response_id, items)) {
        const caller = await callerOf(req, res);
        const reader = readerOf(caller, credentialOf(req));
        conversation = await conversationOf(
          deps.billing,
          { accountId: caller.accountId, reader },
          request.previous_response_id,
          items,
        );
      }
      const chat = rebuiltChatRequest(request, conversation);
      const shell: ResponseShell = {
        id: newResponseId(),
        createdAtS: Math.floor(Date.now() / 1000),
        request,
        store: request.store ?? true,
      };
      // A background job streams to edge, so a cancel bills the output produced until then.
      const plan = await chatPlan(background ? { ...chat, stream: true } : chat, shell.id);
      const admission = await admit(deps, req, res, plan);
      job = await startJob(deps, req, res, plan, admission);
      const saving = { deps, req, caller: admission.caller, shell, input: conversation.input };
      if (background) await answerQueued(res, job, guard, { ...saving, webhookUrl, background });
      else if (plan.stream) await relayResponse(req, res, job, guard, saving);
      else await answerResponse(res, await job.final(), guard, saving);
    } catch (error) {
      if (background?.stored) throw error;
      background?.release();
      await settleGuard(guard, job);
      throw error;
    }
  };
}

interface Saving {
  deps: EdgeDeps;
  req: Request;
  caller: Caller;
  shell: ResponseShell;
  input: Conversation['input'];
}

async function answerResponse(
  res: Response,
  final: JobReply,
  guard: IdempotencyGuard | null,
  saving: Saving,
): Promise<void> {
  const completion = final.data ?? {};
  const choice = (completion.choices as Json[] | undefined)?.[0];
  const ending = endingOf(choice?.finish_reason);
  const output = outputItemsOf(choice?.message as Json | undefined, ending.status);
  const response: Json = {
    ...responseObject(saving.shell, { ...ending, output, usage: usageOf(completion.usage) }),
    _service: serviceBlock(final),
  };
  await sendJson(res, 200, await saved(saving, response), guard);
}

const noSlot: ReleaseSlot = () => {};

/**
 * A background response: stored queued (in progress) before it is answered, so a `GET` or a
 * cancel on any edge finds it; then read to its end in the background, whatever the client does
 * meanwhile. Not stored: the job is cancelled, its hold voided, and the request fails (nobody
 * could ever read its result). Stored but not answered: the key is spent, never released (a
 * retry must not start a second one).
 */
async function answerQueued(
  res: Response,
  job: RunningJob,
  guard: IdempotencyGuard | null,
  saving: Saving & {
    webhookUrl: string | undefined;
    background: { release: ReleaseSlot; stored: boolean };
  },
): Promise<void> {
  const { deps, req, caller, shell, input, webhookUrl, background } = saving;
  const owner = { accountId: caller.accountId, reader: readerOf(caller, credentialOf(req)) };
  const queued = queuedResponse(shell, job.jobId);
  try {
    await deps.billing.saveResponse(owner.accountId, shell.id, {
      tokenDigest: owner.reader,
      previousResponseId: shell.request.previous_response_id ?? null,
      inputItems: input,
      response: queued,
      inProgress: true,
      ...(webhookUrl === undefined ? {} : { webhookUrl }),
    });
  } catch (error) {
    job.cancel();
    await deps.billing
      .void(holdIdOfJob(job.jobId), { outcome: 'cancelled' })
      .catch((voidError: unknown) => logOf(req).warn({ err: voidError }, 'hold not voided'));
    throw error;
  }
  job.keepAfterClientLeaves();
  background.stored = true;
  void deps.background.run(job, shell, owner, logOf(req), background.release);
  try {
    await sendJson(res, 200, queued, guard);
  } catch (error) {
    await guard
      ?.spend(`Response ${shell.id} was created; read it with GET /v1/responses/${shell.id}.`)
      .catch(() => undefined);
    throw error;
  }
}

/** The response as answered: `store: false` (and a warning) when saving it failed. */
async function saved(saving: Saving, response: Json): Promise<Json> {
  if (!saving.shell.store) return response;
  const { deps, req, caller, shell, input } = saving;
  const reader = readerOf(caller, credentialOf(req));
  return saveResponse(deps.billing, logOf(req), { caller, reader, shell, input, response });
}

/** The job's chat chunks as Responses events, from `response.created` to its end. */
async function relayResponse(
  req: Request,
  res: Response,
  job: RunningJob,
  guard: IdempotencyGuard | null,
  saving: Saving,
): Promise<void> {
  let reply = await job.next();
  // From the first byte on, the request may be charged and cannot be replayed.
  await spendBeforeStreaming(guard, job);
  const events = new ResponseEvents(saving.shell);
  openEventStream(res);
  await writeEvents(res, events.start());
  try {
    while (reply.type !== 'final') {
      await writeEvents(res, events.chunk(reply.data ?? {}));
      reply = await job.next();
    }
    const last = events.chunk(reply.data ?? {});
    const service = serviceBlock(reply);
    const { events: ending, response } = events.finish(service.cost_dzd, { ...service });
    const answered = await saved(saving, response);
    if (answered !== response) ending[ending.length - 1]!.response = answered;
    await writeEvents(res, [...last, ...ending]);
  } catch (error) {
    if (job.cancelledByClient) return;
    const failure = asGatewayError(error);
    logOf(req).warn({ jobId: job.jobId, code: failure.code }, 'stream failed after it started');
    await writeEvents(res, events.fail(failure));
  }
  res.end();
}

async function writeEvents(res: Response, events: ResponseEvent[]): Promise<void> {
  for (const event of events) {
    await writeFrame(res, `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  }
}

import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { GatewayError, errorBody } from '@gateway/contracts';
import type { Logger } from '@gateway/observability';
import type { BillingClient } from '@gateway/billing-client';
import type { Caller, IdempotencyRef, StoredResponse } from '@gateway/contracts';
import { applyRateLimit, logOf, stateOf } from './context.js';

/** Who is calling, from what edge knows or from billing (without counting the request). */
export type Identify = (req: Request, res: Response) => Promise<Caller>;

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** Larger answers are not kept; the key is then spent (a retry gets 409), never run twice. */
const MAX_STORED_BODY_CHARS = 4 * 1024 * 1024;

/** Where a hold whose answer went out unkept is reported (`DeliveredAnswers`). */
export interface DeliveredMarks {
  mark(holdId: string): void;
}

/**
 * `Idempotency-Key` on POST routes (decisions §3), held in billing so that every edge replica
 * agrees. Same key + same request within 24 h: the first response is replayed and the request
 * charged once; another request under the key: 409 `idempotency_key_conflict`; the first still
 * running: 409 `conflict`. Only successful responses are kept: an error charged nothing, so the
 * key is released and the client may retry with it. A stream cannot be replayed: once it
 * started the key is spent, and a retry gets 409 `conflict`.
 */
export class Idempotency {
  constructor(
    private readonly billing: BillingClient,
    /** How long a claim may stay in progress (longer than any request). */
    private readonly leaseMs: number,
    private readonly identify: Identify,
    private readonly delivered: DeliveredMarks,
  ) {}

  /**
   * Claims the request's key: a guard to finish it with, null without a key, or 'replayed' when
   * the stored response was sent. `fingerprint` is what must match on a retry (the body).
   */
  async begin(
    req: Request,
    res: Response,
    fingerprint: unknown,
    /** The hold the request will place: billing refunds it if the claim lapses unanswered. */
    holdId?: string,
  ): Promise<IdempotencyGuard | null | 'replayed'> {
    const key = req.get(IDEMPOTENCY_KEY_HEADER);
    if (key === undefined) return null;
    if (!KEY_PATTERN.test(key)) {
      throw new GatewayError(
        'invalid_request_body',
        `${IDEMPOTENCY_KEY_HEADER} must be 1 to 255 printable ASCII characters`,
        { param: IDEMPOTENCY_KEY_HEADER },
      );
    }
    const ref: IdempotencyRef = {
      accountId: (await this.identify(req, res)).accountId,
      key,
      requestHash: createHash('sha256')
        .update(JSON.stringify([req.method, req.originalUrl, fingerprint]))
        .digest('hex'),
    };
    const claim = await this.billing.claimIdempotencyKey(ref, this.leaseMs, holdId);
    if (claim.outcome === 'claimed') {
      const held = holdId === undefined ? null : { holdId, delivered: this.delivered };
      return new IdempotencyGuard(this.billing, ref, logOf(req), held);
    }
    // A replay is a request too: it counts against the rate limit.
    if (!stateOf(res).rateLimit) {
      applyRateLimit(res, (await this.billing.authenticate(req.get('Authorization'))).rateLimit);
    }
    sendStored(res, claim.response);
    return 'replayed';
  }
}

/**
 * The claim of one request; finish it exactly once. An answer goes out once it is kept
 * (`complete`), never when billing answers that the claim was lost: billing ends a claim left
 * in progress past its lease and refunds its hold (ADR 0067), so that answer was refunded, and
 * `complete` throws. When billing does not answer the store, the answer goes out all the same
 * and its hold is reported delivered, so that the lapsed claim is not refunded. A stream's
 * `spend` throws on any failure: the stream then never starts. `release` only logs its failures.
 */
export class IdempotencyGuard {
  #done = false;
  #claimLost = false;

  constructor(
    private readonly billing: BillingClient,
    private readonly ref: IdempotencyRef,
    private readonly log: Logger,
    /** The hold the claim names, and where to report it delivered. */
    private readonly held: { holdId: string; delivered: DeliveredMarks } | null = null,
  ) {}

  /**
   * Keeps a successful response for replays; throws when the claim was lost (do not send).
   * Billing not answering is logged, and the hold reported delivered (send).
   */
  async complete(response: StoredResponse): Promise<void> {
    const tooLarge = response.body.length > MAX_STORED_BODY_CHARS;
    const stored: StoredResponse = tooLarge
      ? conflictAnswer('The response to this Idempotency-Key was too large to keep for replay.')
      : response;
    try {
      await this.#keep(() => this.billing.completeIdempotencyKey(this.ref, stored));
    } catch (error) {
      if (this.#claimLost) throw error;
      if (this.held) this.held.delivered.mark(this.held.holdId);
    }
  }

  /**
   * The request may be charged but its response cannot be replayed (a stream): the key is
   * spent; throws when it was not, or may not have been.
   */
  async spend(message: string): Promise<void> {
    await this.#keep(() => this.billing.completeIdempotencyKey(this.ref, conflictAnswer(message)));
  }

  /** The request charged nothing: the key may be used again. */
  async release(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    await this.billing.releaseIdempotencyKey(this.ref).catch((error: unknown) => {
      this.log.warn({ err: error, step: 'release' }, 'idempotency record not updated');
    });
  }

  /**
   * Billing answered that the claim was no longer this request's (it lapsed and was ended, its
   * hold refunded): the answer was not sent, and whatever its hold holds is to be released.
   */
  get claimLost(): boolean {
    return this.#claimLost;
  }

  async #keep(work: () => Promise<void>): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    try {
      await work();
    } catch (error) {
      this.#claimLost = error instanceof GatewayError && error.code === 'conflict';
      this.log.warn({ err: error, claimLost: this.#claimLost }, 'answer not kept for its key');
      throw error;
    }
  }
}

/** What a spent key answers a retry: 409 `conflict` with why. */
function conflictAnswer(message: string): StoredResponse {
  return {
    status: 409,
    contentType: 'application/json; charset=utf-8',
    body: JSON.stringify(errorBody('conflict', message, IDEMPOTENCY_KEY_HEADER)),
    encoding: 'utf8',
  };
}

function sendStored(res: Response, stored: StoredResponse): void {
  res.status(stored.status);
  res.set('Content-Type', stored.contentType);
  res.set(REPLAYED_HEADER, 'true');
  res.send(Buffer.from(stored.body, stored.encoding));
}

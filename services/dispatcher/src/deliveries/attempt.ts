import {
  contextFromHeaders,
  markSpanFailed,
  SpanKind,
  withSpan,
  type Logger,
} from '@gateway/observability';
import { batchOrEach, NaturalBatcher } from '@gateway/runtime';
import type { Keyring } from '@gateway/crypto';
import { rowAad } from '../crypto/row-aad.js';
import type { DispatcherMetrics } from '../metrics.js';
import type { WebhookClient } from '../outbound/webhook-client.js';
import type { SigningSecrets } from '../secrets/signing-secrets.js';
import { webhookHeaders, type WebhookFormat } from '../signing/signature-headers.js';
import type { AttemptRecord, ClaimedDelivery, DeliveryRepository } from './delivery-repository.js';
import type { DeliveryPayload } from './intake.js';
import { decide, type RetryPolicy } from './schedule.js';

export interface AttemptRunnerOptions {
  repository: DeliveryRepository;
  box: Keyring;
  secrets: SigningSecrets;
  client: WebhookClient;
  policies: Record<WebhookFormat, RetryPolicy>;
  metrics: DispatcherMetrics;
  logger: Logger;
  clock?: () => Date;
}

/** Attempt records per statement at most: above the attempts in flight (DISPATCH_CONCURRENCY). */
const RECORD_BATCH_MAX = 256;
/** Record statements running at once; the attempts ending meanwhile wait for the next. */
const RECORDS_IN_FLIGHT = 2;

type Outcome = { claim: ClaimedDelivery; attempt: AttemptRecord };

/**
 * One attempt of one claimed delivery: open the payload, sign with the secrets active when it
 * was claimed (read by the claim itself, just before the attempt, so a secret added or expired
 * meanwhile counts from the next attempt on), send, decide, record.
 */
export class AttemptRunner {
  private readonly clock: () => Date;
  /** Natural batching: an attempt ending alone is recorded at once, alone. */
  private readonly records: NaturalBatcher<Outcome, boolean>;

  constructor(private readonly options: AttemptRunnerOptions) {
    this.clock = options.clock ?? (() => new Date());
    const { repository } = options;
    // One statement for the batch; item by item if it fails, so one record that cannot be
    // written fails alone (its lease lapses and the delivery is attempted again).
    const send = batchOrEach(
      (outcomes: Outcome[]) => repository.recordAttempts(outcomes),
      (outcome: Outcome) => repository.recordAttempt(outcome.claim, outcome.attempt),
    );
    this.records = new NaturalBatcher(send, {
      maxBatchSize: RECORD_BATCH_MAX,
      maxInFlight: RECORDS_IN_FLIGHT,
    });
  }

  /**
   * Each attempt is a CLIENT span of the trace that queued the delivery (its stored
   * `traceparent`). The customer's endpoint gets no `traceparent`: our trace ids stay ours.
   */
  run(claim: ClaimedDelivery): Promise<void> {
    const parent = claim.traceParent
      ? contextFromHeaders({ traceparent: claim.traceParent })
      : undefined;
    return withSpan(
      'POST webhook',
      {
        kind: SpanKind.CLIENT,
        parent,
        attributes: {
          'http.request.method': 'POST',
          'webhook.delivery_id': claim.id,
          'webhook.attempt': claim.roundAttemptCount + 1,
        },
      },
      async (span) => {
        const outcome = await this.attempt(claim);
        span.setAttribute('webhook.outcome', outcome);
        if (outcome !== 'delivered') markSpanFailed(span, outcome);
      },
    );
  }

  private async attempt(claim: ClaimedDelivery): Promise<string> {
    const { repository, metrics, logger } = this.options;
    if (!claim.sealed) {
      await repository.markDropped(claim);
      logger.info({ deliveryId: claim.id }, 'payload purged before delivery; dropped');
      return 'dropped';
    }
    const payload = this.open(claim);
    const secrets = await this.options.secrets.claimed(claim.accountId, claim.secrets);
    const startedAt = this.clock();
    const body = Buffer.from(payload.body, 'utf8');
    const headers = webhookHeaders({
      format: claim.format,
      deliveryId: claim.id,
      webhookId: claim.webhookId,
      body,
      timestampS: Math.floor(startedAt.getTime() / 1000),
      secrets: secrets.map((s) => s.secret),
    });
    const result = await this.options.client.post(payload.url, headers, body);
    const roundAttempt = claim.roundAttemptCount + 1;
    const verdict = decide(result, roundAttempt, this.options.policies[claim.format]);
    const recorded = await this.records.submit({
      claim,
      attempt: { startedAt, statusCode: result.statusCode, latencyMs: result.latencyMs, verdict },
    });
    if (!recorded) {
      logger.warn({ deliveryId: claim.id }, 'lease lost during the attempt; result not recorded');
      return 'lease lost';
    }
    metrics.attempts.inc({ outcome: verdict.outcome });
    logger.info(
      {
        deliveryId: claim.id,
        roundAttempt,
        statusCode: result.statusCode,
        latencyMs: result.latencyMs,
        outcome: verdict.outcome,
        ...(verdict.outcome === 'delivered' ? {} : { error: verdict.error }),
      },
      'webhook attempt',
    );
    return verdict.outcome;
  }

  private open(claim: ClaimedDelivery): DeliveryPayload {
    const plaintext = this.options.box.open(claim.sealed!, rowAad(claim.accountId, claim.id));
    return JSON.parse(plaintext.toString('utf8')) as DeliveryPayload;
  }
}

/**
 * Edge admits API-key requests in billing's database itself (ADR 0070), as a role that may
 * execute the API keys' admission and a key's last use and nothing else: billing's HTTP hop
 * leaves the request path. Scoped tokens (and anything that is not an API key, for its error)
 * still go to billing, which alone may verify them. The admission and its refusals are billing's
 * own (@gateway/ledger-calls), and each item is answered as billing's batch route answers it, so
 * that the request path cannot tell the two apart.
 */
import type { DirectAdmissions } from '@gateway/billing-client';
import { GatewayError, type AdmissionRequest, type BatchItemAnswer } from '@gateway/contracts';
import {
  admissionToWire,
  admitRequestOf,
  ApiKeyLastUsed,
  carriesApiKey,
  createApiKeyAdmission,
  type ApiKeyAdmissionResult,
} from '@gateway/ledger-calls';
import { SpanKind, tracingEnabled, withSpan, type Logger } from '@gateway/observability';
import { dependencyUnavailable, errorAnswerOf } from '@gateway/runtime';
import pg from 'pg';

export interface DirectAdmissionOptions {
  /** As edge's admission role (ADMISSION_DATABASE_URL). */
  pool: pg.Pool;
  /** Billing's HOLD_TTL_MS. */
  holdTtlMs: number;
  logger: Logger;
  clock?: () => Date;
}

export function createDirectAdmissions(
  options: DirectAdmissionOptions,
): DirectAdmissions & { close(): Promise<void> } {
  const { pool, logger } = options;
  const clock = options.clock ?? (() => new Date());
  const lastUsed = new ApiKeyLastUsed({
    pool,
    clock,
    onError: (error) => logger.warn({ err: error }, "API key's last use not written"),
  });
  const admitApiKeys = createApiKeyAdmission({
    pool,
    clock,
    holdTtlMs: options.holdTtlMs,
    lastUsed,
  });
  const answerOf = (result: ApiKeyAdmissionResult): BatchItemAnswer => {
    if (result.ok) {
      const { principal, admission } = result.value;
      return { status: 200, body: admissionToWire(principal, admission) };
    }
    return errorAnswerOf(failureOf(result.error, logger));
  };
  const admit = async (items: readonly AdmissionRequest[]) => {
    const results = await admitApiKeys(
      items.map((item) => ({
        authorization: item.authorization,
        request: { ...admitRequestOf(item), holdId: item.holdId },
      })),
    );
    return results.map(answerOf);
  };
  return {
    takes: (item: AdmissionRequest) => carriesApiKey(item.authorization),
    admit: tracingEnabled() ? traced(admit) : admit,
    close: () => pool.end(),
  };
}

/**
 * While tracing is on, a CLIENT span per statement (in the context of the request that started
 * the batch), where billing's server span was when the call went over its API.
 */
function traced(admit: DirectAdmissions['admit']): DirectAdmissions['admit'] {
  const attributes = {
    'db.system.name': 'postgresql',
    'db.operation.name': 'billing_admit_api_keys_v1',
  };
  return (items) =>
    withSpan(
      'ledger admit',
      {
        kind: SpanKind.CLIENT,
        attributes: { ...attributes, 'db.operation.batch.size': items.length },
      },
      () => admit(items),
    );
}

/**
 * A refusal as it is; a failure of the database as billing unreachable would be (503 naming
 * billing, retried shortly), so that the request path treats both alike; anything else is a
 * defect, logged, and an internal error.
 */
function failureOf(error: unknown, logger: Logger): GatewayError {
  if (error instanceof GatewayError) return error;
  if (isDatabaseUnavailable(error)) {
    logger.warn({ err: error }, 'admission: billing database unavailable');
    return dependencyUnavailable('billing', 'is unreachable', error);
  }
  logger.error({ err: error }, 'admission failed');
  return new GatewayError('internal_error', 'Internal error');
}

/**
 * No SQLSTATE (the connection refused, reset or timed out in the client), or one of the classes
 * that say the server cannot serve now: connection exceptions (08), insufficient resources (53),
 * operator intervention (57: shutting down, statement timeout), and serialization failures and
 * deadlocks (40), which a retried request gets past.
 */
function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof pg.DatabaseError)) return true;
  return ['08', '53', '57', '40'].includes(error.code?.slice(0, 2) ?? '');
}

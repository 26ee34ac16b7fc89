import type pg from 'pg';
import type { Logger, ServiceMetrics } from '@gateway/observability';
import { parseDelays, type DispatcherConfig } from './config.js';
import { Keyring } from '@gateway/crypto';
import { AttemptRunner } from './deliveries/attempt.js';
import { DeliveryQueries } from './deliveries/delivery-queries.js';
import { DeliveryRepository } from './deliveries/delivery-repository.js';
import { DispatchLoop } from './deliveries/dispatch-loop.js';
import { DeliveryIntake } from './deliveries/intake.js';
import type { RetryPolicy } from './deliveries/schedule.js';
import { createDispatcherMetrics } from './metrics.js';
import type { Lookup } from './outbound/guarded-agent.js';
import { createWebhookClient, type WebhookClient } from './outbound/webhook-client.js';
import { SecretRepository } from './secrets/secret-repository.js';
import { MAX_ACTIVE_SECRETS, SigningSecrets } from './secrets/signing-secrets.js';
import type { WebhookFormat } from './signing/signature-headers.js';

export interface DispatcherDeps {
  pool: pg.Pool;
  logger: Logger;
  registry: ServiceMetrics['registry'];
  /** PEM read from WEBHOOK_CA_FILE by the composition root. */
  extraCaPem?: string;
  /** Tests inject a resolver; the system's otherwise. */
  lookup?: Lookup;
  random?: () => number;
}

export interface Dispatcher {
  intake: DeliveryIntake;
  secrets: SigningSecrets;
  deliveries: DeliveryQueries;
  loop: DispatchLoop;
  client: WebhookClient;
}

/**
 * A claim must outlast the attempt it covers (timeout, signing, recording), or a second
 * dispatcher could send the same attempt while the first is still waiting for an answer.
 */
export const leaseMsFor = (attemptTimeoutMs: number): number => 2 * attemptTimeoutMs + 10_000;

function retryPolicies(config: DispatcherConfig, random: () => number) {
  const policy = (text: string): RetryPolicy => ({
    delaysMs: parseDelays(text),
    jitterRatio: config.RETRY_JITTER_RATIO,
    random,
  });
  return {
    A: policy(config.RETRY_SCHEDULE_A_MS),
    B: policy(config.RETRY_SCHEDULE_B_MS),
  } satisfies Record<WebhookFormat, RetryPolicy>;
}

/** Wires the dispatcher's parts from configuration; main.ts and the tests share it. */
export function createDispatcher(config: DispatcherConfig, deps: DispatcherDeps): Dispatcher {
  const box = Keyring.parse(config.ENCRYPTION_KEY);
  const repository = new DeliveryRepository(deps.pool, MAX_ACTIVE_SECRETS);
  const policies = retryPolicies(config, deps.random ?? Math.random);
  const secrets = new SigningSecrets({
    repository: new SecretRepository(deps.pool),
    box,
    rotationWindowMs: config.SECRET_ROTATION_WINDOW_MS,
    rotationsPerHour: config.SECRET_ROTATIONS_PER_HOUR,
  });
  const metrics = createDispatcherMetrics(deps.registry, () => repository.dueCount());
  const client = createWebhookClient({
    timeoutMs: config.ATTEMPT_TIMEOUT_MS,
    maxResponseBodyBytes: config.MAX_RESPONSE_BODY_BYTES,
    policy: { allowInsecureLoopback: config.WEBHOOK_ALLOW_INSECURE_LOOPBACK },
    ...(deps.extraCaPem ? { extraCaPem: deps.extraCaPem } : {}),
    ...(deps.lookup ? { lookup: deps.lookup } : {}),
  });
  const runner = new AttemptRunner({
    repository,
    box,
    secrets,
    client,
    policies,
    metrics,
    logger: deps.logger,
  });
  const loop = new DispatchLoop({
    repository,
    secrets,
    attempt: (claim) => runner.run(claim),
    metrics,
    logger: deps.logger,
    intervalMs: config.DISPATCH_INTERVAL_MS,
    batchSize: config.DISPATCH_BATCH_SIZE,
    concurrency: config.DISPATCH_CONCURRENCY,
    accountConcurrency: config.DISPATCH_ACCOUNT_CONCURRENCY,
    leaseMs: leaseMsFor(config.ATTEMPT_TIMEOUT_MS),
  });
  const intake = new DeliveryIntake({
    repository,
    box,
    retentionMs: config.RETENTION_MS,
    policies,
  });
  return { intake, secrets, deliveries: new DeliveryQueries(deps.pool), loop, client };
}

import { randomBytes } from 'node:crypto';

/*
 * The suite's knobs, from the environment so CI can shorten a run without editing code.
 * Defaults fit the whole suite in about six minutes on two shared cores.
 */

/** An integer setting from the environment, or `fallback`; out of range is an error. */
export function intFrom(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

export const FAULTS = {
  /** Concurrent requests per repetition (one funded account, a "lane", each). */
  concurrency: intFrom('FAULTS_CONCURRENCY', 16, 1, 64),
  /** Multiplies every scenario's repetitions (1 = the default counts). */
  repetitionScale: intFrom('FAULTS_REPETITION_SCALE', 1, 1, 20),
  /** How long billing stays stopped (SIGSTOP) in the billing-paused scenario. */
  billingPauseMs: intFrom('FAULTS_BILLING_PAUSE_MS', 10_000, 1_000, 60_000),
  /** After a repetition, how long holds may stay pending before they count as left behind. */
  // Above the dispatcher's 30 s redelivery of a completion it could not store (PostgreSQL down).
  settleWaitMs: intFrom('FAULTS_SETTLE_WAIT_MS', 45_000, 1_000, 180_000),
  holdPublishGraceMs: 3_000,
  /** How long a killed RabbitMQ node of the cluster stays down. */
  brokerNodeDownMs: 3_000,
  /** Most jobs (1.5 s) outlive it, so faults land on marked and unmarked holds alike. */
  holdPublishMarkDelayMs: 1_000,
  holdSweepIntervalMs: 1_000,
  /** Edge's wait for a (next) reply; short so a lost reply ends a client's wait quickly. */
  replyTimeoutMs: 20_000,
  adminToken: randomBytes(32).toString('hex'),
  /** A generation takes about 1.5 s: a fault lands while jobs are running. */
  node: { firstTokenLatencyMs: 50, tokensPerSecond: 25, answerTokensMin: 30, answerTokensMax: 40 },
} as const;

/**
 * A hold's end as its callers state it (token counts as numbers, times in epoch milliseconds),
 * checked and turned into the calls' inputs: the one place billing's API and the worker's direct
 * calls read a usage, so both refuse the same values.
 */
import { GatewayError, type VoidOutcomeReason } from '@gateway/contracts';
import type { RunReport, SettleInput, VoidReport } from './outcomes.js';

/** What a settlement reports: the tokens it charges, and what its usage record keeps. */
export interface HoldUsage {
  inputTokens: number | bigint;
  /** Includes reasoning tokens. */
  outputTokens: number | bigint;
  /** For the usage record: reasoning tokens among outputTokens, a cancellation. */
  reasoningTokens?: number | bigint;
  cancelled?: boolean;
  /** Unix ms when the worker picked the job; how long the generation took. */
  startedAtMs?: number;
  generationMs?: number;
}

/** A void's usage-record outcome (`failed` when omitted) and the run's timings. */
export interface HoldVoidUsage {
  outcome?: VoidOutcomeReason;
  startedAtMs?: number;
  generationMs?: number;
}

/** 400 `invalid_request_body` naming the parameter, unless `value` is a count of tokens. */
export function requireTokenCount(param: string, value: unknown): bigint {
  const ok =
    (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) ||
    (typeof value === 'bigint' && value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER));
  if (!ok) {
    throw new GatewayError('invalid_request_body', `${param} must be a non-negative integer`, {
      param,
    });
  }
  return BigInt(value as number | bigint);
}

function runReport(run: { startedAtMs?: number; generationMs?: number }): RunReport {
  return {
    ...(run.startedAtMs === undefined ? {} : { startedAt: new Date(run.startedAtMs) }),
    ...(run.generationMs === undefined ? {} : { generationMs: run.generationMs }),
  };
}

/** The settlement of `holdId` (its journal transaction id is chosen per attempt). */
export function settleRequestOf(
  holdId: string,
  usage: HoldUsage,
): Omit<SettleInput, 'transactionId'> {
  const reasoning = usage?.reasoningTokens;
  return {
    holdId,
    inputTokens: requireTokenCount('inputTokens', usage?.inputTokens),
    outputTokens: requireTokenCount('outputTokens', usage?.outputTokens),
    ...(reasoning === undefined
      ? {}
      : { reasoningTokens: requireTokenCount('reasoningTokens', reasoning) }),
    ...(usage.cancelled === true ? { cancelled: true } : {}),
    ...runReport(usage),
  };
}

/** What a void keeps in the usage record. */
export function voidReportOf(usage: HoldVoidUsage = {}): VoidReport {
  return {
    ...(usage.outcome === undefined ? {} : { outcome: usage.outcome }),
    ...runReport(usage),
  };
}

import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { StringEnum } from './schemas/common.js';

/*
 * Usage records: the public answers of `GET /v1/usage` and `GET /admin/v1/usage`, and
 * the request log billing serves to edge (and later the dashboard). Billing builds these bodies;
 * edge passes them through. Keys are snake_case like the rest of the public API; DZD amounts are
 * JSON numbers with up to 6 decimals.
 */

/** `day,model`: one group per UTC day and model (the dashboard's stacked chart). */
export const USAGE_GROUP_BY = ['day', 'model', 'key', 'day,model'] as const;
export type UsageGroupBy = (typeof USAGE_GROUP_BY)[number];

export const USAGE_OUTCOMES = ['succeeded', 'failed', 'cancelled', 'refused'] as const;
export type UsageOutcome = (typeof USAGE_OUTCOMES)[number];

/** Bounds of one usage query: the range it may span and the request-log page size. */
export const USAGE_LIMITS = {
  maxRangeDays: 366,
  /** `from` when omitted: this many days before `to`. */
  defaultRangeDays: 30,
  logPageMax: 500,
  logPageDefault: 100,
  /** The request log as CSV (one download): at most this many rows, newest first. */
  csvMaxRows: 10_000,
  /**
   * Groups in one summary: an operator's account × day × model summary over a
   * year of a large tenant base is refused beyond this (400 naming what to narrow) instead of
   * answered unbounded.
   */
  summaryMaxGroups: 10_000,
} as const;

/** One group of `GET /v1/usage`: its key (day, model or key), then the sums. */
export const UsageGroupSchema = Type.Object({
  account_id: Type.Optional(Type.String({ description: 'Operators only.' })),
  day: Type.Optional(Type.String({ description: 'YYYY-MM-DD (UTC), group_by=day or day,model' })),
  model: Type.Optional(Type.String({ description: 'group_by=model or day,model' })),
  /** A scoped token's requests are its key's. */
  key: Type.Optional(
    Type.Union([Type.String(), Type.Null()], { description: 'API key name, group_by=key' }),
  ),
  scoped_token_id: Type.Optional(
    Type.Union([Type.String(), Type.Null()], {
      description: 'group_by=key: the scoped token, null for the key itself',
    }),
  ),
  requests: Type.Integer(),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  cost_dzd: Type.Number({ description: 'Net: what was charged, less refunds.' }),
  refunded_dzd: Type.Number({ description: 'Refunds of answers delivered to nobody.' }),
});
export type UsageGroup = Static<typeof UsageGroupSchema>;

/** `GET /v1/usage` (and the operators' `GET /admin/v1/usage`): one entry per group. */
export const UsageListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(UsageGroupSchema) },
  { $id: 'UsageList' },
);
export type UsageList = Static<typeof UsageListSchema>;

/** One request of the log: never a prompt or an output. */
export const UsageLogEntrySchema = Type.Object({
  account_id: Type.Optional(Type.String({ description: 'Operators only.' })),
  request_id: Type.Union([Type.String(), Type.Null()]),
  job_id: Type.String(),
  /** When it was admitted, and when its hold ended (its cost posted). */
  created_at: Type.String({ format: 'date-time' }),
  ended_at: Type.String({ format: 'date-time' }),
  endpoint: Type.Union([Type.String(), Type.Null()]),
  model: Type.String(),
  key: Type.Union([Type.String(), Type.Null()]),
  scoped_token_id: Type.Union([Type.String(), Type.Null()]),
  priority: Type.Boolean(),
  prompt_tokens: Type.Integer(),
  completion_tokens: Type.Integer(),
  reasoning_tokens: Type.Integer(),
  /** Net: the settled cost less its refund. */
  cost_dzd: Type.Number(),
  /** The settled cost given back because the answer reached nobody; 0 otherwise. */
  refunded_dzd: Type.Number(),
  status: StringEnum(USAGE_OUTCOMES),
  queue_latency_ms: Type.Union([Type.Integer(), Type.Null()]),
  generation_latency_ms: Type.Union([Type.Integer(), Type.Null()]),
  /**
   * A Responses API request whose input and output are stored now (`store`, not yet deleted or
   * expired): content the account can read back. False for every other request.
   */
  stored: Type.Boolean(),
});
export type UsageLogEntry = Static<typeof UsageLogEntrySchema>;

/** A page of the request log, newest first. */
export const UsageLogPageSchema = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(UsageLogEntrySchema),
  /** Pass as `cursor` for the next (older) page; null on the last page. */
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});
export type UsageLogPage = Static<typeof UsageLogPageSchema>;

import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { StringEnum } from './schemas/common.js';

/*
 * Receipts: one request traced to its money. `GET /v1/requests/{request_id}`
 * (any API key of the account) and the operators' `GET /admin/v1/accounts/{id}/requests/{request_id}`;
 * billing builds the body from the hold, its usage record and the ledger, edge passes it on.
 * `{request_id}` is the `X-Request-Id` of the request or its job id (`chatcmpl-…`, the hold id).
 */

/** What a receipt id may look like: a request id (`X-Request-Id`'s syntax) or a job id. */
export const RECEIPT_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';

/** `pending` while the request runs; then its usage record's outcome. */
export const RECEIPT_STATUSES = ['pending', 'succeeded', 'failed', 'cancelled', 'refused'] as const;
export type ReceiptStatus = (typeof RECEIPT_STATUSES)[number];

const Dzd = (description: string) => Type.Number({ description });
const MicroDzd = (description: string) => Type.String({ pattern: '^[0-9]+$', description });
const NullableMicroDzd = (description: string) =>
  Type.Union([Type.String({ pattern: '^[0-9]+$' }), Type.Null()], { description });
const Instant = (description: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });
const Millis = (description: string) =>
  Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description });
const Ids = (description: string) => Type.Array(Type.String(), { description, maxItems: 16 });

export const ReceiptSchema = Type.Object(
  {
    object: Type.Literal('receipt'),
    account_id: Type.Optional(Type.String({ description: 'Operators only.' })),
    request_id: Type.Union([Type.String(), Type.Null()], { description: 'Its X-Request-Id.' }),
    job_id: Type.String({ description: 'The response id (`chatcmpl-…`); also the hold id.' }),
    hold_id: Type.String(),
    model: Type.String(),
    endpoint: Type.Union([Type.String(), Type.Null()]),
    key: Type.Union([Type.String(), Type.Null()], { description: 'The API key (or signing key).' }),
    scoped_token_id: Type.Union([Type.String(), Type.Null()]),
    priority: Type.Boolean(),
    status: StringEnum(RECEIPT_STATUSES),
    hold_status: StringEnum(['pending', 'settled', 'voided', 'expired'] as const),
    tokens: Type.Object({
      prompt: Type.Integer({ minimum: 0 }),
      completion: Type.Integer({ minimum: 0 }),
      reasoning: Type.Integer({ minimum: 0 }),
    }),
    price_per_million: Type.Union(
      [Type.Object({ input_dzd: Type.Number(), output_dzd: Type.Number() }), Type.Null()],
      {
        description:
          "The model's prices at admission (the hold's snapshot), DZD per 1M tokens; null for " +
          'holds placed before prices were snapshotted.',
      },
    ),
    hold_dzd: Dzd('The worst case held at admission, DZD.'),
    settled_dzd: Type.Union([Type.Number(), Type.Null()], {
      description: 'What the settlement charged, DZD; null while pending, 0 when voided.',
    }),
    refunded_dzd: Dzd('Given back because the answer reached nobody, DZD.'),
    net_dzd: Dzd('settled − refunded: what the request cost, DZD.'),
    hold_micro_dzd: MicroDzd('Exact µDZD (the `_dzd` numbers are for display).'),
    settled_micro_dzd: NullableMicroDzd('Exact µDZD.'),
    refunded_micro_dzd: MicroDzd('Exact µDZD.'),
    net_micro_dzd: MicroDzd('Exact µDZD.'),
    ledger: Type.Object({
      settlement_transaction_id: Type.Union([Type.String(), Type.Null()], {
        description: 'The `hold_settlement` transaction; null when nothing was charged.',
      }),
      settlement_entry_ids: Ids('Its ledger entries (customer and revenue legs).'),
      refund_transaction_id: Type.Union([Type.String(), Type.Null()], {
        description: 'The `reversal` transaction of the refund, if any.',
      }),
      refund_entry_ids: Ids('Its ledger entries.'),
    }),
    timings: Type.Object({
      created_at: Type.String({ format: 'date-time', description: 'Admission (the hold placed).' }),
      ended_at: Instant('The hold ended (the cost posted); null while pending.'),
      refunded_at: Instant('The refund, if any.'),
      queue_latency_ms: Millis('From admission to a worker starting it.'),
      generation_latency_ms: Millis('From the worker starting it to its end.'),
    }),
  },
  { $id: 'Receipt' },
);
export type Receipt = Static<typeof ReceiptSchema>;

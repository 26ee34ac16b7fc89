/**
 * Receipts: one request traced to its money, in the public shape of
 * @gateway/contracts (receipts-api.ts). Money stays integer µDZD until the answer is rendered.
 */
import {
  GatewayError,
  microDzdToDzd,
  RECEIPT_ID_PATTERN,
  type Receipt,
  type ReceiptStatus,
} from '@gateway/contracts';
import type { ReceiptRow, ReceiptRepository, ReceiptTransactionRow } from './receipt-repository.js';

const ID = new RegExp(RECEIPT_ID_PATTERN);

const notFound = (id: string) =>
  new GatewayError('resource_not_found', `No request ${id} of this account`, {
    details: { request_id: id },
  });

const numberOrNull = (value: string | null) => (value === null ? null : Number(value));
const isoOrNull = (value: Date | null) => (value === null ? null : value.toISOString());

function pricesOf(row: ReceiptRow): Receipt['price_per_million'] {
  const input = row.input_price_micro_dzd_per_m;
  const output = row.output_price_micro_dzd_per_m;
  if (input === null || output === null) return null;
  return { input_dzd: microDzdToDzd(BigInt(input)), output_dzd: microDzdToDzd(BigInt(output)) };
}

/** A hold still pending has no record yet; a purged record leaves the hold's outcome unknown. */
function statusOf(row: ReceiptRow): ReceiptStatus {
  if (row.hold_status === 'pending') return 'pending';
  if (row.outcome !== null) return row.outcome as ReceiptStatus;
  return row.hold_status === 'settled' ? 'succeeded' : 'failed';
}

function ledgerOf(row: ReceiptRow, transactions: ReceiptTransactionRow[]): Receipt['ledger'] {
  const settlement = transactions.find((t) => t.kind === 'hold_settlement');
  const refund = transactions.find((t) => t.id === row.refund_transaction_id);
  return {
    settlement_transaction_id: settlement?.id ?? null,
    settlement_entry_ids: settlement?.entry_ids ?? [],
    refund_transaction_id: refund?.id ?? null,
    refund_entry_ids: refund?.entry_ids ?? [],
  };
}

export function receiptOf(
  row: ReceiptRow,
  transactions: ReceiptTransactionRow[],
  operator: boolean,
): Receipt {
  const hold = BigInt(row.amount_micro_dzd);
  // Null while pending; a voided or expired hold charged nothing.
  const settled =
    row.hold_status === 'pending' ? null : BigInt(row.settled_amount_micro_dzd ?? '0');
  // A refund without its record (purged) still shows: the hold says it was refunded.
  const refunded =
    row.refunded_micro_dzd !== null
      ? BigInt(row.refunded_micro_dzd)
      : row.refunded_at !== null
        ? (settled ?? 0n)
        : 0n;
  const net = (settled ?? 0n) - refunded;
  return {
    object: 'receipt',
    ...(operator ? { account_id: row.account_id } : {}),
    request_id: row.request_id,
    job_id: row.id,
    hold_id: row.id,
    model: row.model,
    endpoint: row.endpoint,
    key: row.api_key_name,
    scoped_token_id: row.scoped_token_id,
    priority: row.priority,
    status: statusOf(row),
    hold_status: row.hold_status,
    tokens: {
      prompt: Number(row.prompt_tokens ?? 0),
      completion: Number(row.completion_tokens ?? 0),
      reasoning: Number(row.reasoning_tokens ?? 0),
    },
    price_per_million: pricesOf(row),
    hold_dzd: microDzdToDzd(hold),
    settled_dzd: settled === null ? null : microDzdToDzd(settled),
    refunded_dzd: microDzdToDzd(refunded),
    net_dzd: microDzdToDzd(net),
    hold_micro_dzd: hold.toString(),
    settled_micro_dzd: settled === null ? null : settled.toString(),
    refunded_micro_dzd: refunded.toString(),
    net_micro_dzd: net.toString(),
    ledger: ledgerOf(row, transactions),
    timings: {
      created_at: row.created_at.toISOString(),
      ended_at: isoOrNull(row.finalized_at),
      refunded_at: isoOrNull(row.refunded_at),
      queue_latency_ms: numberOrNull(row.queue_latency_ms),
      generation_latency_ms: numberOrNull(row.generation_latency_ms),
    },
  };
}

export class Receipts {
  constructor(private readonly store: ReceiptRepository) {}

  /**
   * The receipt of the account's request `id` (its X-Request-Id or its job id); 404
   * `resource_not_found` for an unknown id or another account's. `operator`: names the account.
   */
  async get(accountId: string, id: string, operator = false): Promise<Receipt> {
    if (!ID.test(id)) throw notFound(id.slice(0, 128));
    const row = await this.store.find(accountId, id);
    if (!row) throw notFound(id);
    const transactions = await this.store.transactions(row.id, row.refund_transaction_id);
    return receiptOf(row, transactions, operator);
  }
}

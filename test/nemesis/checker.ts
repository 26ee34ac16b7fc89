import { charged, priced, type ChargedHold, type Delivery } from '../faults/fault-check.js';
import type { FaultStack } from '../faults/fault-stack.js';
import { LIMITED_KEY, type Customer } from './customers.js';
import type { Operation } from './workload.js';

/*
 * The nemesis's checker: after the faults stop and the system settles, what every client got
 * (the history) against what billing recorded (holds, usage records, balances, budgets, the
 * ledger's own check, receipts) and what the webhook receiver got. Each rule is one sentence of
 * test/nemesis/README.md; a broken rule is a violation naming the operation it concerns.
 */

export interface Violation {
  rule: string;
  detail: string;
  /** The operation it concerns, when it concerns one. */
  opId?: string;
}

export interface HoldRow extends ChargedHold {
  id: string;
  account_id: string;
  request_id: string | null;
  amount: string;
  past_expiry: boolean;
  key_budget_id: string | null;
  rate_key_id: string | null;
  rate_window_start_ms: string | null;
  rate_tokens: string | null;
}

export type { Delivery };

const sum = (values: bigint[]) => values.reduce((total, value) => total + value, 0n);
const keptOf = (holds: HoldRow[]) => sum(holds.filter(charged).map((h) => BigInt(h.settled!)));

export async function readHolds(stack: FaultStack, accountIds: string[]): Promise<HoldRow[]> {
  const { rows } = await stack.sql.query<HoldRow>(
    `SELECT id, account_id, request_id, status::text AS status, amount_micro_dzd::text AS amount,
            settled_amount_micro_dzd::text AS settled, refunded_at IS NOT NULL AS refunded,
            expires_at < now() AS past_expiry, key_budget_id, rate_key_id,
            rate_window_start_ms::text AS rate_window_start_ms, rate_tokens::text AS rate_tokens
       FROM holds WHERE account_id = ANY($1)`,
    [accountIds],
  );
  return rows;
}

const answerOf = (op: Operation) => op.attempts.find((a) => a.outcome.kind === 'answer')?.outcome;
const accepted = (op: Operation) => op.attempts.some((a) => a.outcome.kind === 'accepted');
const left = (op: Operation) => op.attempts.some((a) => a.outcome.kind === 'left');
const relayed = (op: Operation) => op.attempts.some((a) => a.outcome.relayed > 0);

/** The client got no output and did not leave: the request failed or its answer was lost. */
export const gotNothing = (op: Operation) =>
  !answerOf(op) && !accepted(op) && !left(op) && !relayed(op);

/** Violations of one operation's money and webhook rules. */
export function checkOperation(op: Operation, own: HoldRow[], hooks: Delivery[]): Violation[] {
  const found: Violation[] = [];
  const add = (rule: string, detail: string) => found.push({ rule, detail, opId: op.id });
  const kept = own.filter(charged);
  const keptMicro = keptOf(own);
  if (kept.length > 1) add('charged once', `${kept.length} kept charges`);
  for (const hold of own) {
    if (hold.status === 'pending') {
      add('no hold left pending', hold.past_expiry ? 'pending past its expiry' : 'still pending');
    }
    if (BigInt(hold.settled ?? 0) > BigInt(hold.amount)) {
      add('never above its hold', `settled ${hold.settled} > held ${hold.amount}`);
    }
  }
  const answer = answerOf(op);
  if (answer?.usage !== undefined) {
    const cost = priced(answer.usage);
    if (keptMicro !== cost) add('charged its usage', `answer costs ${cost}, charged ${keptMicro}`);
  }
  if (gotNothing(op) && kept.length > 0) {
    const statuses = op.attempts.map((a) => `${a.outcome.kind}/${a.outcome.status}`).join(',');
    add('no charge without an answer', `charged ${keptMicro}, client got ${statuses}`);
  }
  if (accepted(op)) {
    const ids = new Set(hooks.map((hook) => hook.id));
    if (hooks.length === 0) add('async job delivered', 'accepted, no webhook');
    if (ids.size > 1) add('one delivery id', `${ids.size} delivery ids`);
    const succeeded = hooks.some((hook) => hook.status === 'succeeded');
    if (succeeded && kept.length !== 1) add('webhook matches ledger', 'succeeded, not charged');
    if (hooks.length > 0 && !succeeded && kept.length > 0) {
      add('webhook matches ledger', `webhook says ${hooks[0]!.status}, charged ${keptMicro}`);
    }
  }
  return found;
}

interface BalanceRow {
  account_id: string;
  credits: string;
  debits: string;
  pending: string;
}

/** Balances, usage records and budgets against the holds, per account and per key. */
export async function checkAccounts(
  stack: FaultStack,
  customers: Customer[],
  holds: HoldRow[],
): Promise<Violation[]> {
  const found: Violation[] = [];
  const accountIds = [...new Set(customers.map((c) => c.accountId))];
  const { rows: balances } = await stack.sql.query<BalanceRow>(
    `SELECT account_id, posted_credits_micro_dzd::text AS credits,
            posted_debits_micro_dzd::text AS debits, pending_micro_dzd::text AS pending
       FROM account_balances WHERE account_id = ANY($1)`,
    [accountIds],
  );
  const { rows: usage } = await stack.sql.query<{ hold_id: string; net: string }>(
    `SELECT hold_id, (cost_micro_dzd - refunded_micro_dzd)::text AS net
       FROM usage_records WHERE account_id = ANY($1)`,
    [accountIds],
  );
  const usageByHold = new Map(usage.map((row) => [row.hold_id, BigInt(row.net)]));
  for (const hold of holds.filter((h) => h.status === 'settled')) {
    const expected = charged(hold) ? BigInt(hold.settled!) : 0n;
    const recorded = usageByHold.get(hold.id);
    if (recorded !== expected) {
      found.push({
        rule: 'usage records equal the ledger',
        detail: `hold ${hold.id}: usage ${recorded ?? 'missing'}, ledger ${expected}`,
      });
    }
  }
  for (const accountId of accountIds) {
    const credit = customers.find((c) => c.accountId === accountId)!.creditMicroDzd;
    const balance = balances.find((row) => row.account_id === accountId);
    const charged = keptOf(holds.filter((h) => h.account_id === accountId));
    if (balance === undefined) {
      found.push({ rule: 'balance', detail: `${accountId}: no balance row` });
      continue;
    }
    const net = BigInt(balance.credits) - BigInt(balance.debits);
    if (net !== credit - charged) {
      found.push({
        rule: 'balance equals credit minus charges',
        detail: `${accountId}: ${net} ≠ ${credit} − ${charged}`,
      });
    }
    if (net - BigInt(balance.pending) < 0n) {
      found.push({ rule: 'balance never below zero', detail: `${accountId}: ${net}` });
    }
  }
  found.push(...(await checkLimitedKeys(stack, accountIds, holds)));
  return found;
}

/** The limited keys' budgets and per-minute limits were never exceeded. */
async function checkLimitedKeys(
  stack: FaultStack,
  accountIds: string[],
  holds: HoldRow[],
): Promise<Violation[]> {
  const found: Violation[] = [];
  const { rows: budgets } = await stack.sql.query<{
    id: string;
    api_key_id: string;
    limit: string;
    reserved: string;
  }>(
    `SELECT b.id, b.api_key_id, b.limit_micro_dzd::text AS limit,
            b.reserved_micro_dzd::text AS reserved
       FROM budgets b WHERE b.account_id = ANY($1) AND b.api_key_id IS NOT NULL`,
    [accountIds],
  );
  for (const budget of budgets) {
    const spent = keptOf(holds.filter((h) => h.key_budget_id === budget.id));
    if (spent > BigInt(budget.limit)) {
      found.push({
        rule: 'budget not exceeded',
        detail: `${budget.id}: ${spent} > ${budget.limit}`,
      });
    }
    if (BigInt(budget.reserved) !== 0n) {
      found.push({
        rule: 'budget reservations released',
        detail: `${budget.id}: ${budget.reserved}`,
      });
    }
    const windows = new Map<string, { requests: number; tokens: bigint }>();
    for (const hold of holds.filter((h) => h.rate_key_id === budget.api_key_id)) {
      const window = windows.get(hold.rate_window_start_ms ?? '') ?? { requests: 0, tokens: 0n };
      window.requests += 1;
      window.tokens += BigInt(hold.rate_tokens ?? 0);
      windows.set(hold.rate_window_start_ms ?? '', window);
    }
    for (const [start, window] of windows) {
      if (window.requests > LIMITED_KEY.requestsPerMinute) {
        found.push({
          rule: 'key requests per minute not exceeded',
          detail: `key ${budget.api_key_id}, window ${start}: ${window.requests} admitted`,
        });
      }
      if (window.tokens > BigInt(LIMITED_KEY.tokensPerMinute)) {
        found.push({
          rule: 'key tokens per minute not exceeded',
          detail: `key ${budget.api_key_id}, window ${start}: ${window.tokens} tokens`,
        });
      }
    }
  }
  return found;
}

/**
 * Credits (top-ups): idempotent on their Idempotency-Key (scope `credit`, kept 24 h); the same
 * key with another body is `idempotency_key_conflict`.
 */
import { createHash } from 'node:crypto';
import { GatewayError } from '@gateway/contracts';
import { newId } from '../identity/secrets.js';
import { assertBalanced, creditLegs } from './ledger-accounts.js';
import type { LedgerStore, LedgerTx } from './prisma-store.js';
import type { Balance, CreditInput, LedgerCredit } from './types.js';
import { requireAmount, requireId, requireReference } from './validation.js';

export const CREDIT_IDEMPOTENCY_SCOPE = 'credit';

function requestHash(parts: readonly (string | null)[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

type WireBalance = Record<keyof Balance, string>;

function balanceToWire(balance: Balance): WireBalance {
  return {
    postedCreditsMicroDzd: balance.postedCreditsMicroDzd.toString(),
    postedDebitsMicroDzd: balance.postedDebitsMicroDzd.toString(),
    pendingMicroDzd: balance.pendingMicroDzd.toString(),
    balanceMicroDzd: balance.balanceMicroDzd.toString(),
    availableMicroDzd: balance.availableMicroDzd.toString(),
  };
}

function balanceFromWire(wire: WireBalance): Balance {
  return {
    postedCreditsMicroDzd: BigInt(wire.postedCreditsMicroDzd),
    postedDebitsMicroDzd: BigInt(wire.postedDebitsMicroDzd),
    pendingMicroDzd: BigInt(wire.pendingMicroDzd),
    balanceMicroDzd: BigInt(wire.balanceMicroDzd),
    availableMicroDzd: BigInt(wire.availableMicroDzd),
  };
}

export interface CreditDeps {
  store: LedgerStore;
  clock: () => Date;
  idempotencyTtlMs: number;
}

/** The first answer under this key, or null when this transaction now owns the key. */
async function claimOrReplay(
  deps: CreditDeps,
  tx: LedgerTx,
  key: string,
  hash: string,
  now: Date,
): Promise<LedgerCredit | null> {
  const { store } = deps;
  const claimed = await store.claimIdempotencyKey(tx, {
    scope: CREDIT_IDEMPOTENCY_SCOPE,
    key,
    requestHash: hash,
    now,
    expiresAt: new Date(now.getTime() + deps.idempotencyTtlMs),
  });
  if (claimed) return null;
  const stored = await store.readIdempotencyRecord(tx, CREDIT_IDEMPOTENCY_SCOPE, key);
  if (!stored) throw new Error(`idempotency record ${key} vanished`);
  if (stored.requestHash !== hash) {
    throw new GatewayError(
      'idempotency_key_conflict',
      'This Idempotency-Key was already used with a different request body.',
    );
  }
  const body = stored.responseBody as { transactionId: string; balance: WireBalance };
  return { transactionId: body.transactionId, balance: balanceFromWire(body.balance) };
}

export async function creditWith(deps: CreditDeps, input: CreditInput): Promise<LedgerCredit> {
  const accountId = requireId('accountId', input.accountId);
  const amount = requireAmount('amountMicroDzd', input.amountMicroDzd, 1n);
  const reference = requireReference(input.reference);
  const key =
    input.idempotencyKey === undefined || input.idempotencyKey === null
      ? null
      : requireId('idempotencyKey', input.idempotencyKey);
  const hash = requestHash([accountId, amount.toString(), reference]);
  const { store } = deps;

  return store.transaction(async (tx) => {
    const now = deps.clock();
    if (key !== null) {
      const replay = await claimOrReplay(deps, tx, key, hash, now);
      if (replay) return replay;
    }
    const balance = await store.addPostedCredits(tx, accountId, amount);
    if (!balance) {
      throw new GatewayError('resource_not_found', `Account ${accountId} does not exist.`);
    }
    const transactionId = newId('txn');
    const legs = creditLegs(accountId, amount);
    assertBalanced(legs);
    await store.insertJournalTransaction(tx, {
      id: transactionId,
      kind: 'credit',
      accountId,
      reference,
      holdId: null,
      createdAt: now,
      legs,
    });
    if (key !== null) {
      await store.storeIdempotencyResponse(tx, CREDIT_IDEMPOTENCY_SCOPE, key, {
        transactionId,
        balance: balanceToWire(balance),
      });
    }
    return { transactionId, balance };
  });
}

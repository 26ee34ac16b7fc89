/*
 * The conversation a Responses request continues: the `previous_response_id` chain and every
 * `item_reference`, read from billing's stored state in one call, then the request's own items
 * with each reference replaced by the item it names. Only a request that names stored state
 * asks billing, and only for the caller's own (see readerOf).
 */
import { createHash } from 'node:crypto';
import type { Caller, ResponseItemRecord } from '@gateway/contracts';
import type { BillingClient } from '@gateway/billing-client';
import type { InputItem } from './input-items.js';

export interface Conversation {
  /** The chain's items, oldest first (input then output of each response). */
  history: ResponseItemRecord[];
  /** The request's items, references resolved: what is stored as its input. */
  input: InputItem[];
}

/**
 * Who reads stored state: null for an API key (all of the account's), the SHA-256 of a scoped
 * token otherwise (only what that token stored). The digest names the token without keeping it.
 */
export function readerOf(caller: Caller, credential: string | undefined): string | null {
  if (caller.kind === 'api_key') return null;
  // A scoped token is never read as the whole account, even if its credential went missing.
  if (credential === undefined) throw new Error('a scoped token without its credential');
  return createHash('sha256').update(credential).digest('hex');
}

export const needsStoredState = (previousResponseId: string | undefined, items: InputItem[]) =>
  previousResponseId !== undefined || items.some((item) => item.type === 'item_reference');

export async function conversationOf(
  billing: BillingClient,
  who: { accountId: string; reader: string | null },
  previousResponseId: string | undefined,
  items: InputItem[],
): Promise<Conversation> {
  const itemIds = [
    ...new Set(items.filter((item) => item.type === 'item_reference').map((item) => item.id)),
  ];
  const context = await billing.responseContext(who.accountId, {
    reader: who.reader,
    previousResponseId: previousResponseId ?? null,
    itemIds,
  });
  const found = new Map(context.items.map((item) => [item.id, item]));
  const input = items.map((item) =>
    item.type === 'item_reference' ? (found.get(item.id) ?? item) : item,
  );
  return { history: context.history, input };
}

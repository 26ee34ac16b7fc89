/**
 * A stored response's content (its input items and response object) is customer content: it is
 * sealed with the MASTER_KEY keyring as one JSON document. The AAD binds it to its row and its
 * reader: content moved to another response, account or token, or a row whose owner was changed
 * in the database, no longer opens.
 */
import type { Keyring, SealedValue } from '@gateway/crypto';
import type { ResponseItemRecord } from '@gateway/contracts';
import type { SealedColumns } from './response-repository.js';

/** What one stored response keeps (the sealed plaintext). */
export interface ResponseContent {
  inputItems: ResponseItemRecord[];
  response: Record<string, unknown>;
}

/** The row a content belongs to: its account, id and the token that stored it (null: a key). */
export interface ContentOwner {
  accountId: string;
  responseId: string;
  tokenDigest: string | null;
}

export const responseContentAad = (owner: ContentOwner): string =>
  `stored_response:${owner.accountId}:${owner.responseId}:${owner.tokenDigest ?? 'key'}`;

/** The plaintext as stored; its length is what `LIMITS.storedResponseMaxBytes` bounds. */
export const encodeContent = (content: ResponseContent): Buffer =>
  Buffer.from(JSON.stringify({ inputItems: content.inputItems, response: content.response }));

export const sealContent = (
  keyring: Keyring,
  owner: ContentOwner,
  plaintext: Buffer,
): SealedValue => keyring.seal(plaintext, responseContentAad(owner));

export function openContent(
  keyring: Keyring,
  owner: ContentOwner,
  sealed: SealedColumns,
): ResponseContent {
  const plaintext = keyring.open(
    {
      ciphertext: sealed.ciphertext,
      nonce: sealed.nonce,
      tag: sealed.tag,
      keyVersion: sealed.key_version,
    },
    responseContentAad(owner),
  );
  // Authenticated by the seal: this is what billing itself stored, already validated.
  return JSON.parse(plaintext.toString('utf8')) as ResponseContent;
}

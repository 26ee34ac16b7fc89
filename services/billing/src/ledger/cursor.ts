import { GatewayError } from '@gateway/contracts';

/** Position after an entry in (createdAt, id) order. */
export interface EntryCursor {
  createdAt: Date;
  id: bigint;
}

const PATTERN = /^(\d{1,15})\.(\d{1,19})$/;

/** Opaque to clients: base64url of `<epoch ms>.<entry id>`. */
export function encodeCursor(cursor: EntryCursor): string {
  return Buffer.from(`${cursor.createdAt.getTime()}.${cursor.id}`).toString('base64url');
}

export function decodeCursor(text: string): EntryCursor {
  const match = PATTERN.exec(Buffer.from(text, 'base64url').toString('latin1'));
  if (!match || text.length > 64) {
    throw new GatewayError('invalid_request_body', 'cursor is not a cursor this API returned', {
      param: 'cursor',
    });
  }
  return { createdAt: new Date(Number(match[1])), id: BigInt(match[2]!) };
}

import jwt from 'jsonwebtoken';
import { type FundedAccount } from '@gateway/testing';

/** A scoped token minted by a client with a standard JWT library (spec: HS256, kid format). */
export function clientToken(
  tenant: FundedAccount,
  claims: { exp: number; model?: string; models?: string[]; spending_limit?: number },
  keyName = 'auto',
): string {
  const kid = `service:${tenant.accountId}:${Buffer.from(keyName).toString('base64')}`;
  const signed = jwt.sign({ sub: `service:${tenant.accountId}`, ...claims }, tenant.apiKey, {
    algorithm: 'HS256',
    keyid: kid,
    noTimestamp: true,
  });
  return `jwt:${signed}`;
}

export const nowS = () => Math.floor(Date.now() / 1000);

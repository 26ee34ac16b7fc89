import type { Request } from 'express';
import { describe, expect, it } from '@jest/globals';
import { AuthFailureLimiter } from '../http/auth.js';
import { KEY_READS_PER_MINUTE, keyReads } from './key-reads.js';

/*
 * The bound on `/v1/key` reads keeps an entry only for credentials billing accepted: invented
 * credentials leave nothing behind, and an accepted credential is refused past the limit, its
 * first read (before edge knew it) included.
 */

const requestWith = (credential: string) =>
  ({
    get: (name: string) => (name === 'Authorization' ? `Bearer ${credential}` : undefined),
  }) as unknown as Request;

/** Runs the guard: undefined when it let the request through, else its error. */
const guarded = (guard: ReturnType<typeof keyReads>['guard'], req: Request) =>
  new Promise<unknown>((resolve) => guard(req, {} as never, (error?: unknown) => resolve(error)));

describe('key reads', () => {
  it('keeps nothing for credentials billing never accepted', async () => {
    const reads = keyReads(new AuthFailureLimiter({ failuresPerMinute: 100 }));
    for (let i = 0; i < 100; i += 1) {
      expect(await guarded(reads.guard, requestWith(`sk-invented-${i}`))).toBeUndefined();
    }
    expect(await reads.tracked('sk-invented-0')).toBe(false);
    expect(await reads.tracked('sk-invented-99')).toBe(false);
  });

  it('counts an accepted credential from its first read and refuses it past the limit', async () => {
    const authFailures = new AuthFailureLimiter({ failuresPerMinute: 100 });
    const reads = keyReads(authFailures);
    const first = requestWith('sk-real');
    expect(await guarded(reads.guard, first)).toBeUndefined();
    // Billing accepted it: edge knows it now, and the first read is counted.
    authFailures.accepted(first);
    await reads.accepted(first);
    expect(await reads.tracked('sk-real')).toBe(true);
    for (let read = 2; read <= KEY_READS_PER_MINUTE; read += 1) {
      const req = requestWith('sk-real');
      expect(await guarded(reads.guard, req)).toBeUndefined();
      await reads.accepted(req);
    }
    expect(await guarded(reads.guard, requestWith('sk-real'))).toMatchObject({
      code: 'rate_limit_exceeded',
    });
  });
});

import { describe, expect, it } from '@jest/globals';
import { checkBooks } from './books-check.js';

describe('checkBooks', () => {
  it('reports the ledger’s violations and the closed periods’ together', async () => {
    const ledger = (violations: string[]) => ({
      checkInvariants: async () => ({ ok: violations.length === 0, violations }),
    });
    const periods = (violations: string[]) => ({ violations: async () => violations });
    await expect(checkBooks(ledger([]), periods([]))).resolves.toEqual({
      ok: true,
      violations: [],
    });
    await expect(checkBooks(ledger([]), periods(['closed period 2026-09: x']))).resolves.toEqual({
      ok: false,
      violations: ['closed period 2026-09: x'],
    });
    await expect(checkBooks(ledger(['a']), periods(['b']))).resolves.toEqual({
      ok: false,
      violations: ['a', 'b'],
    });
  });
});

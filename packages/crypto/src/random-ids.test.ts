import { newId, RANDOM_POOL_BYTES, randomBase32 } from './random-ids.js';

describe('random ids', () => {
  it('draws lowercase base32 characters of the asked length', () => {
    expect(randomBase32(64)).toMatch(/^[a-z2-7]{64}$/);
  });

  it('names an id by its prefix, with 100 random bits', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId('txn')));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^txn_[a-z2-7]{20}$/);
  });

  it('gives distinct, well-formed ids across refills of its pool', () => {
    // 20 bytes an id: several pools' worth, so ids straddle refills.
    const count = Math.ceil((3 * RANDOM_POOL_BYTES) / 20) + 7;
    const ids = new Set(Array.from({ length: count }, () => newId('hold')));
    expect(ids.size).toBe(count);
    const unaligned = Array.from({ length: 500 }, (_, i) => randomBase32(1 + (i % 37)));
    for (const [i, text] of unaligned.entries()) {
      expect(text).toMatch(new RegExp(`^[a-z2-7]{${1 + (i % 37)}}$`));
    }
  });

  it('draws a length above the pool directly', () => {
    const long = randomBase32(RANDOM_POOL_BYTES + 1);
    expect(long).toMatch(new RegExp(`^[a-z2-7]{${RANDOM_POOL_BYTES + 1}}$`));
    // 4,097 characters of 5 random bits: all 32 letters appear.
    expect(new Set(long).size).toBe(32);
  });
});

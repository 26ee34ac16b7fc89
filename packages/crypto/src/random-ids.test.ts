import { newId, randomBase32 } from './random-ids.js';

describe('random ids', () => {
  it('draws lowercase base32 characters of the asked length', () => {
    expect(randomBase32(64)).toMatch(/^[a-z2-7]{64}$/);
  });

  it('names an id by its prefix, with 100 random bits', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId('txn')));
    expect(ids.size).toBe(1000);
    for (const id of ids) expect(id).toMatch(/^txn_[a-z2-7]{20}$/);
  });
});

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Keyring } from '@gateway/crypto';
import { rowAad } from '../crypto/row-aad.js';
import type { SecretRepository, SecretRow } from './secret-repository.js';
import { SigningSecrets } from './signing-secrets.js';

const box = Keyring.parse(randomBytes(32).toString('base64'));

/** A repository that only counts the reads `SigningSecrets` makes of it. */
function countingRepository(stored: SecretRow[]) {
  const counts = { reads: 0 };
  const repository = {
    active: async () => {
      counts.reads += 1;
      return stored;
    },
  } as unknown as SecretRepository;
  return { repository, counts };
}

const sealedRow = (accountId: string, id: string, secret: string): SecretRow => ({
  id,
  sealed: box.seal(secret, rowAad(accountId, id)),
  createdAt: new Date('2026-12-01T10:00:00Z'),
  expiresAt: null,
});

describe('secrets read with a claim', () => {
  it('opens what the claim read, without reading the secrets again', async () => {
    const { repository, counts } = countingRepository([]);
    const secrets = new SigningSecrets({
      repository,
      box,
      rotationWindowMs: 86_400_000,
      rotationsPerHour: 5,
    });
    const rows = [
      sealedRow('acct_a', 'whs_1', 'whsec_one'),
      sealedRow('acct_a', 'whs_2', 'whsec_two'),
    ];
    const opened = await secrets.claimed('acct_a', rows);
    expect(opened.map((secret) => [secret.id, secret.secret])).toEqual([
      ['whs_1', 'whsec_one'],
      ['whs_2', 'whsec_two'],
    ]);
    expect(counts.reads).toBe(0);
  });

  it('reads them when the claim found none (the account has no secret yet)', async () => {
    const { repository, counts } = countingRepository([
      sealedRow('acct_b', 'whs_3', 'whsec_three'),
    ]);
    const secrets = new SigningSecrets({
      repository,
      box,
      rotationWindowMs: 86_400_000,
      rotationsPerHour: 5,
    });
    const opened = await secrets.claimed('acct_b', []);
    expect(opened.map((secret) => secret.secret)).toEqual(['whsec_three']);
    expect(counts.reads).toBe(1);
  });

  it('refuses a claimed secret sealed for another account', async () => {
    const { repository } = countingRepository([]);
    const secrets = new SigningSecrets({
      repository,
      box,
      rotationWindowMs: 86_400_000,
      rotationsPerHour: 5,
    });
    await expect(
      secrets.claimed('acct_c', [sealedRow('acct_other', 'whs_4', 'whsec_four')]),
    ).rejects.toThrow();
  });
});

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Keyring, KeyVersionUnavailableError } from './keyring.js';
import { isKeyringSpec, parseKeyringSpec } from './keyring-spec.js';

const key = () => randomBytes(32).toString('base64');
const aad = 'usr_a:row_1';

describe('Keyring rotation', () => {
  const k1 = key();
  const k2 = key();

  it('treats a single base64 key as version 1 and seals with it', () => {
    const ring = Keyring.parse(k1);
    expect(ring.versions).toEqual([1]);
    const sealed = ring.seal('secret value', aad);
    expect(sealed.keyVersion).toBe(1);
    expect(Buffer.from(sealed.ciphertext).toString('utf8')).not.toContain('secret');
    expect(ring.open(sealed, aad).toString('utf8')).toBe('secret value');
  });

  it('after rotation to v2,v1: opens v1 values and values without a version, seals with v2', () => {
    const old = Keyring.parse(k1).seal('sealed before', aad);
    const rotated = Keyring.parse(`v2:${k2},v1:${k1}`);
    expect(rotated.currentVersion).toBe(2);
    expect(rotated.open(old, aad).toString('utf8')).toBe('sealed before');
    expect(rotated.open({ ...old, keyVersion: null }, aad).toString('utf8')).toBe('sealed before');
    const fresh = rotated.seal('sealed after', aad);
    expect(fresh.keyVersion).toBe(2);
    expect(Keyring.parse(`v2:${k2}`).open(fresh, aad).toString('utf8')).toBe('sealed after');
    // v1 alone cannot open what v2 sealed, even when told it is v1.
    expect(() => Keyring.parse(k1).open({ ...fresh, keyVersion: 1 }, aad)).toThrow();
  });

  it('refuses a value whose key version was retired, naming the version only', () => {
    const old = Keyring.parse(`v1:${k1}`).seal('x', aad);
    const retired = Keyring.parse(`v2:${k2}`);
    expect(() => retired.open(old, aad)).toThrow(KeyVersionUnavailableError);
    expect(() => retired.open(old, aad)).toThrow(
      'sealed with key version 1, which is not configured',
    );
  });

  it('fails closed on a changed ciphertext, tag, nonce, AAD or version', () => {
    const ring = Keyring.parse(`v2:${k2},v1:${k1}`);
    const sealed = ring.seal('payload', aad);
    const flip = (bytes: Uint8Array) => {
      const copy = Buffer.from(bytes);
      copy[0] = copy[0]! ^ 1;
      return copy;
    };
    expect(() => ring.open({ ...sealed, ciphertext: flip(sealed.ciphertext) }, aad)).toThrow();
    expect(() => ring.open({ ...sealed, tag: flip(sealed.tag) }, aad)).toThrow();
    expect(() => ring.open({ ...sealed, nonce: flip(sealed.nonce) }, aad)).toThrow();
    expect(() => ring.open(sealed, 'usr_b:row_1')).toThrow();
    expect(() => ring.open({ ...sealed, keyVersion: 1 }, aad)).toThrow();
    expect(() => ring.open({ ...sealed, nonce: Buffer.alloc(8) }, aad)).toThrow(/malformed/);
  });
});

describe('keyring configuration', () => {
  const k = key();

  it.each([
    ['a short key', randomBytes(31).toString('base64')],
    ['unpadded base64', k.replace(/=$/, '')],
    ['a key without a version in a list', `v2:${key()},${k}`],
    ['versions oldest first', `v1:${k},v2:${key()}`],
    ['a repeated version', `v2:${k},v2:${key()}`],
    ['version 0', `v0:${k}`],
    ['spaces', ` ${k}`],
    ['an empty entry', `v2:${k},`],
  ])('rejects %s without echoing key material', (_what, spec) => {
    expect(isKeyringSpec(spec)).toBe(false);
    let message = '';
    try {
      parseKeyringSpec(spec);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).not.toBe('');
    expect(message).not.toContain(k.slice(0, 12));
  });

  it('accepts one key or versions newest first', () => {
    expect(parseKeyringSpec(k).map((e) => e.version)).toEqual([1]);
    expect(parseKeyringSpec(`v10:${key()},v9:${key()},v1:${k}`).map((e) => e.version)).toEqual([
      10, 9, 1,
    ]);
  });
});

import { describe, expect, it } from '@jest/globals';
import { constantTimeEqual, sha256Hex } from './digests.js';

describe('digests', () => {
  it('digests with SHA-256 hex and compares in constant time', () => {
    expect(sha256Hex('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(constantTimeEqual('same', 'same')).toBe(true);
    expect(constantTimeEqual('same', 'Same')).toBe(false);
    expect(constantTimeEqual('short', 'a much longer string')).toBe(false);
  });
});

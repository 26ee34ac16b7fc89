import { describe, expect, it } from '@jest/globals';
import {
  assertNormalizedPath,
  checkedModelId,
  isValidModelId,
  pathSegment,
} from './identifiers.js';

describe('identifiers in internal URLs', () => {
  it('accepts catalog ids and refuses dot segments and empty segments', () => {
    for (const id of ['meta-llama/Llama-3.1-8B-Instruct', 'llama3.1:8b', 'BAAI/bge-m3', 'a/b.c']) {
      expect(isValidModelId(id)).toBe(true);
    }
    for (const id of ['..', 'a/..', '../admin', 'a/./b', 'a//b', 'a/', '', 'a/../../x']) {
      expect(isValidModelId(id)).toBe(false);
    }
  });

  it('encodes one segment and refuses what could change the route', () => {
    expect(pathSegment('acct_1')).toBe('acct_1');
    expect(pathSegment('a:b@c')).toBe('a%3Ab%40c');
    for (const value of ['', '.', '..', 'a/b', 'a\\b', '%2e', 'a?b', 'a#b', 'a\u0000']) {
      expect(() => pathSegment(value)).toThrow(
        expect.objectContaining({ code: 'resource_not_found' }),
      );
    }
    expect(checkedModelId('org/model:1')).toBe('org/model:1');
    expect(() => checkedModelId('../admin/ledger/check')).toThrow(
      expect.objectContaining({ code: 'model_not_found' }),
    );
  });

  it('refuses a path that URL normalisation would change', () => {
    const base = 'http://127.0.0.1:1';
    const ok = '/internal/v1/models/a/b?x=1';
    expect(() => assertNormalizedPath(new URL(ok, base), ok)).not.toThrow();
    const climbing = '/internal/v1/models/../admin/ledger/check';
    expect(() => assertNormalizedPath(new URL(climbing, base), climbing)).toThrow(
      expect.objectContaining({ code: 'resource_not_found' }),
    );
  });
});

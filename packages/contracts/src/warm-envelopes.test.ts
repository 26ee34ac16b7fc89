import { describe, expect, it, jest } from '@jest/globals';
import { ajv } from './ajv.js';
import { warmEnvelopeValidators } from './envelopes.js';

// A file of its own: its module registry, so its Ajv instance, has compiled nothing before.
describe('warmEnvelopeValidators', () => {
  it('compiles the named kinds before their first message, and only those', () => {
    const spy = jest.spyOn(ajv, 'compile');
    try {
      warmEnvelopeValidators('account.alert');
      expect(spy.mock.calls.map(([schema]) => (schema as { $id?: string }).$id)).toEqual([
        'AccountAlertEnvelopeV1',
      ]);
    } finally {
      spy.mockRestore();
    }
  });
});

import { describe, expect, it } from '@jest/globals';
import { ajv } from './ajv.js';
import { warmEnvelopeValidators } from './envelopes.js';

// A file of its own: its module registry, so its Ajv instance, has compiled nothing before.
describe('warmEnvelopeValidators', () => {
  it('compiles the named kinds before their first message, and only those', () => {
    expect(ajv.getSchema('AccountAlertEnvelopeV1')).toBeUndefined();
    warmEnvelopeValidators('account.alert');
    expect(ajv.getSchema('AccountAlertEnvelopeV1')).toBeDefined();
    expect(ajv.getSchema('BillingSettlementEnvelopeV1')).toBeUndefined();
  });
});

import { describe, expect, it } from '@jest/globals';
import type { AnySchemaObject } from 'ajv';
import * as contracts from './index.js';
import { ENVELOPE_KINDS, ENVELOPE_VERSIONS, EnvelopeError, parseEnvelope } from './envelopes.js';
import { GatewayError } from './errors.js';
import { createBodyValidator, warmRequestValidators } from './validation.js';

/*
 * Validators compile on first use (ajv.ts, `lazyValidator`), so a schema Ajv's strict mode
 * refuses would fail on a service's first request of that kind. Every schema is compiled here
 * instead: the public requests, every message kind, every route body.
 */

/** Every route of every route table the package exports (`*_ROUTES`). */
function routeBodies(): [string, AnySchemaObject][] {
  return Object.entries(contracts)
    .filter(([name]) => name.endsWith('_ROUTES'))
    .flatMap(([table, routes]) =>
      Object.entries(routes as Record<string, { body?: AnySchemaObject }>).flatMap(
        ([name, route]) => (route.body ? [[`${table}.${name}`, route.body]] : []),
      ),
    ) as [string, AnySchemaObject][];
}

describe('every schema compiles under Ajv strict mode', () => {
  it('the public API request validators', () => {
    expect(() => warmRequestValidators()).not.toThrow();
  });

  it.each(ENVELOPE_KINDS.flatMap((kind) => ENVELOPE_VERSIONS.map((v) => [kind, v] as const)))(
    '%s v%s messages',
    (kind, v) => {
      const empty = JSON.stringify({ v, kind });
      expect(() => parseEnvelope(kind, empty)).toThrow(EnvelopeError);
    },
  );

  it('every route body', () => {
    const bodies = routeBodies();
    expect(bodies.length).toBeGreaterThan(20);
    for (const [name, schema] of bodies) {
      const validate = createBodyValidator(schema);
      try {
        validate({});
      } catch (error) {
        if (!(error instanceof GatewayError)) throw new Error(`${name}: ${String(error)}`);
      }
    }
  });
});

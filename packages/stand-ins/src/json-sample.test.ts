import { describe, expect, it } from '@jest/globals';
import type { Json } from './http-client.suite.js';
import { sampleJson } from './json-sample.js';
import {
  expectRecipe,
  expectWeatherArguments,
  recipeSchema,
  weatherParameters,
} from './tool-schemas.suite.js';

const sample = (schema: unknown, seed = 'seed'): Json => JSON.parse(sampleJson(schema, seed, 'A.'));

describe('sampleJson', () => {
  it('is a deterministic function of schema and seed, compact and conforming', () => {
    for (const seed of ['a', 'b', 'Weather in Oran?', 'مرحبا']) {
      const text = sampleJson(weatherParameters, seed, 'A.');
      expect(sampleJson(weatherParameters, seed, 'A.')).toBe(text);
      expect(text).toBe(JSON.stringify(JSON.parse(text)));
      expectWeatherArguments(text);
      expectRecipe(sampleJson(recipeSchema, seed, 'A.'));
    }
  });

  it('puts the answer in an open top-level object, and nowhere else', () => {
    expect(sample({})).toEqual({ answer: 'A.' });
    expect(sample({ type: 'object', properties: {} })).toEqual({ answer: 'A.' });
    expect(sample({ type: 'object', additionalProperties: false })).toEqual({});
    expect(sample({ type: 'object', properties: { o: { type: 'object' } } })).toEqual({ o: {} });
  });

  it('respects bounds, formats, lengths and item counts', () => {
    const value = sample({
      type: 'object',
      properties: {
        big: { type: 'integer', minimum: 500, maximum: 501 },
        negative: { type: 'integer', exclusiveMaximum: -10 },
        fraction: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
        when: { type: 'string', format: 'date-time' },
        id: { type: 'string', format: 'uuid' },
        mail: { type: 'string', format: 'email' },
        code: { type: 'string', minLength: 30, maxLength: 31 },
        pair: { type: 'array', items: { type: 'boolean' }, minItems: 2 },
        none: { type: 'array', items: { type: 'string' }, maxItems: 0 },
        tuple: { type: 'array', prefixItems: [{ type: 'integer' }, { type: 'string' }] },
        maybe: { type: ['null', 'integer'] },
        fixed: { const: 'yes' },
      },
    });
    expect([500, 501]).toContain(value.big);
    expect(value.negative).toBeLessThan(-10);
    expect(value.fraction).toBe(0.5);
    expect(new Date(value.when).toISOString()).toBe('2025-01-01T12:00:00.000Z');
    expect(value.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(value.mail).toMatch(/^[a-z]+@example\.com$/);
    expect(value.code.length).toBeGreaterThanOrEqual(30);
    expect(value.code.length).toBeLessThanOrEqual(31);
    expect(value.pair).toEqual([expect.any(Boolean), expect.any(Boolean)]);
    expect(value.none).toEqual([]);
    expect(value.tuple).toEqual([expect.any(Number), expect.any(String)]);
    expect(Number.isInteger(value.maybe)).toBe(true);
    expect(value.fixed).toBe('yes');
  });

  it('follows $ref, merges allOf, takes the first anyOf branch and ends recursion', () => {
    const tree = {
      definitions: {
        node: {
          type: 'object',
          properties: {
            label: { type: 'string' },
            kids: { type: 'array', items: { $ref: '#/definitions/node' } },
          },
          required: ['label'],
        },
      },
      allOf: [
        { $ref: '#/definitions/node' },
        { properties: { size: { type: 'integer' } }, required: ['size'] },
      ],
    };
    const value = sample(tree);
    expect(Object.keys(value).sort()).toEqual(['kids', 'label', 'size']);
    let depth = 0;
    for (let node = value; node.kids?.length > 0; node = node.kids[0]) depth += 1;
    expect(depth).toBeGreaterThan(1);
    expect(
      sample({ anyOf: [{ type: 'integer', minimum: 7, maximum: 7 }, { type: 'string' }] }),
    ).toBe(7);
    expect(sample({ anyOf: [{ $ref: '#' }] })).toBeNull();
  });
});

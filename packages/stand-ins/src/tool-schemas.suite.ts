import { expect } from '@jest/globals';
import type { Json } from './http-client.suite.js';

/* Tool and output schemas the chat tests use, with a hand check of what conforms to each. */

export const weatherParameters = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 12, maxLength: 40 },
    unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    days: { type: 'integer', minimum: 3, maximum: 7 },
    hourly: { type: 'boolean' },
    spots: { type: 'array', items: { $ref: '#/$defs/spot' } },
    note: { anyOf: [{ type: 'string', format: 'date' }, { type: 'null' }] },
  },
  required: ['city', 'unit', 'days'],
  additionalProperties: false,
  $defs: {
    spot: {
      type: 'object',
      properties: { name: { type: 'string' }, lat: { type: 'number', minimum: -90, maximum: 90 } },
      required: ['name', 'lat'],
    },
  },
};

export const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather forecast for a city.',
    parameters: weatherParameters,
  },
};

export const timeTool = {
  type: 'function',
  function: {
    name: 'get_time',
    parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] },
  },
};

/** Asserts that JSON text conforms to weatherParameters (every declared property is given). */
export function expectWeatherArguments(text: string): void {
  const args = JSON.parse(text) as Json;
  expect(Object.keys(args).sort()).toEqual(['city', 'days', 'hourly', 'note', 'spots', 'unit']);
  expect(typeof args.city).toBe('string');
  expect(args.city.length).toBeGreaterThanOrEqual(12);
  expect(args.city.length).toBeLessThanOrEqual(40);
  expect(['celsius', 'fahrenheit']).toContain(args.unit);
  expect(Number.isInteger(args.days) && args.days >= 3 && args.days <= 7).toBe(true);
  expect(typeof args.hourly).toBe('boolean');
  expect(args.spots).toHaveLength(1);
  expect(Object.keys(args.spots[0]).sort()).toEqual(['lat', 'name']);
  expect(typeof args.spots[0].name).toBe('string');
  expect(Math.abs(args.spots[0].lat)).toBeLessThanOrEqual(90);
  expect(args.note).toMatch(/^\d{4}-\d{2}-\d{2}$/);
}

export const recipeSchema = {
  type: 'object',
  properties: {
    title: { type: 'string' },
    servings: { type: 'integer', exclusiveMinimum: 0, maximum: 12 },
    vegetarian: { type: 'boolean' },
    steps: {
      type: 'array',
      minItems: 2,
      items: {
        type: 'object',
        properties: { order: { type: 'integer' }, text: { type: 'string' } },
        required: ['order', 'text'],
        additionalProperties: false,
      },
    },
    difficulty: { type: 'string', const: 'easy' },
  },
  required: ['title', 'servings', 'vegetarian', 'steps', 'difficulty'],
  additionalProperties: false,
};

export function expectRecipe(text: string): void {
  const recipe = JSON.parse(text) as Json;
  expect(Object.keys(recipe).sort()).toEqual([
    'difficulty',
    'servings',
    'steps',
    'title',
    'vegetarian',
  ]);
  expect(typeof recipe.title).toBe('string');
  expect(Number.isInteger(recipe.servings) && recipe.servings > 0 && recipe.servings <= 12).toBe(
    true,
  );
  expect(typeof recipe.vegetarian).toBe('boolean');
  expect(recipe.steps).toHaveLength(2);
  for (const step of recipe.steps) {
    expect(Object.keys(step).sort()).toEqual(['order', 'text']);
    expect(Number.isInteger(step.order)).toBe(true);
    expect(typeof step.text).toBe('string');
  }
  expect(recipe.difficulty).toBe('easy');
}

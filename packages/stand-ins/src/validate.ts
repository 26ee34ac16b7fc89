import { badRequest } from './errors.js';

/*
 * Field checks shared by the stand-in routes. Messages follow OpenAI's wording so a test
 * sees what a real server would say. `null` counts as absent, as it does upstream.
 */

export type Body = Record<string, unknown>;

export function requireObject(value: unknown): Body {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw badRequest('The request body must be a JSON object.');
  }
  return value as Body;
}

function typeName(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function invalidType(name: string, expected: string, value: unknown): Error {
  return badRequest(
    `Invalid type for '${name}': expected ${expected}, but got ${typeName(value)} instead.`,
    name,
    'invalid_type',
  );
}

function checkRange(name: string, value: number, min: number, max: number, kind: string): number {
  if (value < min) {
    throw badRequest(
      `Invalid '${name}': ${kind} below minimum value. Expected a value >= ${min}, but got ${value} instead.`,
      name,
      `${kind}_below_min_value`,
    );
  }
  if (value > max) {
    throw badRequest(
      `Invalid '${name}': ${kind} above maximum value. Expected a value <= ${max}, but got ${value} instead.`,
      name,
      `${kind}_above_max_value`,
    );
  }
  return value;
}

export function optionalInteger(body: Body, name: string, min: number, max: number) {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value)) throw invalidType(name, 'an integer', value);
  return checkRange(name, value as number, min, max, 'integer');
}

export function optionalNumber(body: Body, name: string, min: number, max: number) {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw invalidType(name, 'a number', value);
  return checkRange(name, value, min, max, 'decimal');
}

export function optionalBoolean(body: Body, name: string): boolean | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalidType(name, 'a boolean', value);
  return value;
}

export function optionalString(body: Body, name: string, maxChars: number): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidType(name, 'a string', value);
  if (value.length > maxChars) {
    throw badRequest(
      `Invalid '${name}': string too long. Expected at most ${maxChars} characters.`,
      name,
      'string_above_max_length',
    );
  }
  return value;
}

export function requireString(body: Body, name: string, maxChars: number): string {
  const value = optionalString(body, name, maxChars);
  if (value === undefined || value.length === 0) {
    throw badRequest(`Missing required parameter: '${name}'.`, name, 'missing_required_parameter');
  }
  return value;
}

export function optionalObject(body: Body, name: string): Body | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw invalidType(name, 'an object', value);
  return value as Body;
}

/** `stop`: a string or an array of at most maxCount strings. */
export function stopSequences(body: Body, name: string, maxCount: number): string[] {
  const value = body[name];
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || !list.every((item) => typeof item === 'string')) {
    throw invalidType(name, 'a string or an array of strings', value);
  }
  if (list.length > maxCount) {
    throw badRequest(
      `Invalid '${name}': array too long. Expected at most ${maxCount} items.`,
      name,
      'array_above_max_length',
    );
  }
  return list as string[];
}

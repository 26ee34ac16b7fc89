import { Type } from '@sinclair/typebox';
import type { SchemaOptions } from '@sinclair/typebox';

/**
 * A string enum as plain `{type: 'string', enum: [...]}`: one clear validation error ("must be one
 * of: …") and a compact OpenAPI rendering, where a union of literals would give `anyOf`.
 */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
) {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

/** An object whose structure the gateway does not check (e.g. `response_format`, tool entries). */
export function OpenObject(options: SchemaOptions = {}) {
  return Type.Unsafe<Record<string, unknown>>({ ...options, type: 'object' });
}

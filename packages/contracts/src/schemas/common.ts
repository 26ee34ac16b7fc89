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

/** Longest client-chosen field name echoed back in an error or warning. */
export const PARAM_NAME_ECHO_MAX_LENGTH = 64;

/** Field names come from the client: cap what is echoed back (names, never values). */
export function clipParamName(name: string): string {
  return name.length > PARAM_NAME_ECHO_MAX_LENGTH
    ? `${name.slice(0, PARAM_NAME_ECHO_MAX_LENGTH)}…`
    : name;
}

/**
 * A DZD amount as the API takes it: a JSON number or a decimal string, positive, at most
 * 1,000,000,000 DZD and 6 decimals (1 µDZD). JSON Schema cannot count a number's decimals
 * exactly (`multipleOf` is floating point), so the reader converts with `dzdToMicroDzd`, which
 * refuses a seventh decimal; the string form is checked here already.
 */
export const dzdAmountSchema = (description?: string) =>
  Type.Union(
    [
      Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000_000 }),
      Type.String({ pattern: '^[0-9]{1,10}(\\.[0-9]{1,6})?$' }),
    ],
    description === undefined ? {} : { description },
  );

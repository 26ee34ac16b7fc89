import { hash32, pickWord, seededRandom } from './answer.js';

/*
 * A JSON value for a JSON Schema, deterministic for a seed: what the stand-ins write as tool-call
 * arguments and as structured output. This is deliberately a small generator for the subset
 * that client libraries emit (zod, pydantic, hand-written tool schemas), not a JSON Schema
 * library. Rules:
 * - `const`, then `enum` (a seeded pick), then `anyOf` / `oneOf` (the first branch);
 *   `allOf` branches are merged shallowly; `$ref` follows `#`, `#/$defs/…`, `#/definitions/…`;
 * - `type` (the first non-null type of a list; without one: object when `properties` are
 *   given, array with `items`, an object at the top level, a string elsewhere);
 * - objects: every declared property, plus any `required` name that is not declared; an open
 *   object at the top level (no properties, extra ones allowed) gets `{"answer": <answer>}`, so
 *   free-form arguments carry the model's answer and last as long as it;
 * - strings: 1–3 vocabulary words, padded to `minLength`, cut to `maxLength`; a few `format`s
 *   (date-time, date, time, email, uri, uuid, hostname, ipv4, ipv6) get a valid constant;
 * - integers and numbers: within minimum / maximum (exclusive ones too), 1–100 when unbounded;
 * - arrays: `max(1, minItems)` items (tuples: one per `prefixItems`);
 * - past MAX_DEPTH, objects keep only required properties and arrays their minimum, which ends
 *   recursive schemas. `pattern`, `multipleOf`, `not`, `if`/`then` are ignored.
 */

type Schema = Record<string, unknown>;

interface Sampling {
  root: Schema;
  random: () => number;
  answer: string;
  /** Values still allowed: a schema that multiplies itself cannot make the stand-in hang. */
  valuesLeft: number;
}

const MAX_DEPTH = 6;
/** Beyond this, a schema that requires itself forever gets null. */
const HARD_MAX_DEPTH = 24;
const MAX_REF_HOPS = 32;
/** Bounds on what one schema can ask for (a document past them may not conform). */
const MAX_VALUES = 10_000;
const MAX_ITEMS = 64;
const MAX_STRING_CHARS = 4_096;
const OPEN_OBJECT_KEY = 'answer';
const DEFAULT_RANGE = { lo: 1, hi: 100 };

const FORMATS: Record<string, (random: () => number) => string> = {
  'date-time': () => '2025-01-01T12:00:00Z',
  date: () => '2025-01-01',
  time: () => '12:00:00',
  email: (random) => `${pickWord(random)}@example.com`,
  uri: (random) => `https://example.com/${pickWord(random)}`,
  url: (random) => `https://example.com/${pickWord(random)}`,
  uuid: (random) => uuidFrom(random),
  hostname: () => 'example.com',
  ipv4: () => '192.0.2.1',
  ipv6: () => '2001:db8::1',
};

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function uuidFrom(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16));
  hex[12] = '4'; // version 4
  hex[16] = '8'; // RFC 4122 variant
  const t = hex.join('');
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-${t.slice(12, 16)}-${t.slice(16, 20)}-${t.slice(20)}`;
}

function followRef(schema: Schema, root: Schema): Schema {
  let current = schema;
  for (let hop = 0; hop < MAX_REF_HOPS && typeof current.$ref === 'string'; hop += 1) {
    const match = /^#\/(\$defs|definitions)\/(.+)$/.exec(current.$ref);
    const defs = match === null ? undefined : root[match[1] ?? ''];
    const target =
      current.$ref === '#' ? root : isSchema(defs) ? defs[match?.[2] ?? ''] : undefined;
    if (!isSchema(target)) return {};
    current = target;
  }
  return current;
}

/** `allOf` as one schema: later branches win, properties merged, required names joined. */
function mergeAllOf(schema: Schema, root: Schema): Schema {
  if (!Array.isArray(schema.allOf)) return schema;
  const parts = [schema, ...schema.allOf.filter(isSchema).map((part) => resolve(part, root))];
  const merged: Schema = Object.assign({}, ...parts, { allOf: undefined });
  const withProperties = parts.filter((part) => isSchema(part.properties));
  if (withProperties.length > 0) {
    merged.properties = Object.assign({}, ...withProperties.map((part) => part.properties));
    merged.required = parts.flatMap((part) => (Array.isArray(part.required) ? part.required : []));
  }
  return merged;
}

function resolve(schema: Schema, root: Schema): Schema {
  return mergeAllOf(followRef(schema, root), root);
}

function typeOf(schema: Schema, depth: number): string {
  const { type } = schema;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.find((t) => t !== 'null') ?? 'null';
  if (isSchema(schema.properties)) return 'object';
  if (schema.items !== undefined || Array.isArray(schema.prefixItems)) return 'array';
  return depth === 0 ? 'object' : 'string';
}

function sampleObject(schema: Schema, sampling: Sampling, depth: number): Schema {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required)
    ? schema.required.filter((name): name is string => typeof name === 'string')
    : [];
  const names = depth >= MAX_DEPTH ? required : [...Object.keys(properties), ...required];
  const open = schema.additionalProperties === undefined || schema.additionalProperties === true;
  if (names.length === 0 && depth === 0 && open) {
    return { [OPEN_OBJECT_KEY]: sampling.answer };
  }
  const value: Schema = {};
  for (const name of new Set(names)) value[name] = sample(properties[name], sampling, depth + 1);
  return value;
}

function sampleArray(schema: Schema, sampling: Sampling, depth: number): unknown[] {
  if (Array.isArray(schema.prefixItems)) {
    return schema.prefixItems.map((item: unknown) => sample(item, sampling, depth + 1));
  }
  const minItems = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const maxItems = typeof schema.maxItems === 'number' ? schema.maxItems : Infinity;
  const wanted = depth >= MAX_DEPTH ? minItems : Math.max(1, minItems);
  const count = Math.min(wanted, maxItems, MAX_ITEMS);
  return Array.from({ length: count }, () => sample(schema.items, sampling, depth + 1));
}

function sampleString(schema: Schema, random: () => number): string {
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  if (format !== undefined) return format(random);
  const words = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pickWord(random));
  let text = words.join(' ');
  const minLength = Math.min(Number(schema.minLength) || 0, MAX_STRING_CHARS);
  while (text.length < minLength) text += ` ${pickWord(random)}`;
  return typeof schema.maxLength === 'number' ? text.slice(0, schema.maxLength) : text;
}

/** The lower or upper bound of a number schema; draft-4 boolean exclusives included. */
function bound(schema: Schema, side: 'minimum' | 'maximum'): { at: number; open: boolean } | null {
  const exclusiveName = side === 'minimum' ? 'exclusiveMinimum' : 'exclusiveMaximum';
  const inclusive = schema[side];
  const exclusive = schema[exclusiveName];
  if (typeof exclusive === 'number') return { at: exclusive, open: true };
  if (typeof inclusive === 'number') return { at: inclusive, open: exclusive === true };
  return null;
}

function sampleNumber(schema: Schema, random: () => number, integer: boolean): number {
  const min = bound(schema, 'minimum');
  const max = bound(schema, 'maximum');
  // Integers inside the bounds; the preferred 1–100 window when it fits them.
  const lo = min === null ? -Infinity : min.open ? Math.floor(min.at) + 1 : Math.ceil(min.at);
  const hi = max === null ? Infinity : max.open ? Math.ceil(max.at) - 1 : Math.floor(max.at);
  let from = Math.max(lo, DEFAULT_RANGE.lo);
  let to = Math.min(hi, DEFAULT_RANGE.hi);
  if (from > to) [from, to] = lo > DEFAULT_RANGE.hi ? [lo, lo + 99] : [hi - 99, hi];
  from = Math.max(from, lo);
  to = Math.min(to, hi);
  if (from <= to) return from + Math.floor(random() * (to - from + 1));
  // No integer fits (a narrow range of a number schema): its midpoint.
  if (!integer && min !== null && max !== null) return (min.at + max.at) / 2;
  return min?.at ?? max?.at ?? 0;
}

function sampleByType(schema: Schema, sampling: Sampling, depth: number): unknown {
  switch (typeOf(schema, depth)) {
    case 'object':
      return sampleObject(schema, sampling, depth);
    case 'array':
      return sampleArray(schema, sampling, depth);
    case 'integer':
      return sampleNumber(schema, sampling.random, true);
    case 'number':
      return sampleNumber(schema, sampling.random, false);
    case 'boolean':
      return sampling.random() < 0.5;
    case 'null':
      return null;
    default:
      return sampleString(schema, sampling.random);
  }
}

/** branchHops: anyOf / oneOf branches taken in a row at this depth (a cycle of them ends). */
function sample(raw: unknown, sampling: Sampling, depth: number, branchHops = 0): unknown {
  if (depth > HARD_MAX_DEPTH || branchHops > MAX_REF_HOPS || sampling.valuesLeft <= 0) {
    return null;
  }
  sampling.valuesLeft -= 1;
  const schema = resolve(isSchema(raw) ? raw : {}, sampling.root);
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum[Math.floor(sampling.random() * schema.enum.length)];
  }
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : schema.oneOf;
  if (Array.isArray(branches) && branches.length > 0) {
    return sample(
      { ...schema, anyOf: undefined, oneOf: undefined, ...branches[0] },
      sampling,
      depth,
      branchHops + 1,
    );
  }
  return sampleByType(schema, sampling, depth);
}

/**
 * Compact JSON text conforming to schema, a function of seedText; `answer` fills an open object
 * at the top level (see the rules above).
 */
export function sampleJson(schema: unknown, seedText: string, answer: string): string {
  const root = isSchema(schema) ? schema : {};
  const sampling = { root, random: seededRandom(hash32(seedText)), answer, valuesLeft: MAX_VALUES };
  return JSON.stringify(sample(root, sampling, 0));
}

import { Ajv } from 'ajv';
import type { AnySchemaObject, ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { clipParamName } from './schemas/common.js';

// ajv-formats is CommonJS; under NodeNext its default import is `module.exports`, whose `default`
// property is the plugin.
const addFormats = addFormatsModule.default;

/**
 * One Ajv instance for the package; every schema is compiled once, on its validator's first call
 * (`lazyValidator`), or ahead of traffic where a service warms it.
 * - strict: unknown keywords or type mistakes in our schemas fail when compiled; a unit test
 *   compiles every one (`validators-compile.test.ts`), so they fail there, not in production.
 *   strictRequired is off because cross-field rules (`not: {required: [a, b]}`) name properties
 *   declared on the parent schema.
 * - verbose: errors carry their schema, which the message builder reads (never their data).
 * - no coercion, no defaults, no removal: the validated value is exactly what the client sent.
 */
export const ajv = new Ajv({
  strict: true,
  strictRequired: false,
  verbose: true,
  ownProperties: true,
  allErrors: false,
  // Chat roles and content parts are discriminated unions: only the named branch is checked.
  discriminator: true,
  // A compiled schema is not registered under its `$id`: validators compile on first use, in
  // whatever order traffic brings (`lazyValidator`), and Ajv refuses to register an id that an
  // earlier schema holds inside it. No schema refers to another by id.
  addUsedSchema: false,
});
addFormats(ajv);

/**
 * `http-url`: an absolute http(s) URL with a host, as WHATWG URL parsing (what fetch uses) sees
 * it. Whether plain http or private addresses are acceptable is the caller's policy, not syntax.
 */
ajv.addFormat('http-url', {
  type: 'string',
  validate: isHttpUrl,
});

const IMAGE_DATA_URL = /^data:image\/[a-z0-9.+-]{1,64};base64,/i;

/**
 * `image-url`: an image as the chat API takes it: a base64 `data:image/...` URL, or an absolute
 * http(s) URL (whether remote URLs are allowed is the model's catalog setting, checked at
 * admission). The payload's characters are not checked here: the model node decodes it.
 */
ajv.addFormat('image-url', {
  type: 'string',
  validate: (value: string) => IMAGE_DATA_URL.test(value.slice(0, 128)) || isHttpUrl(value),
});

function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value) || !URL.canParse(value)) return false;
  return new URL(value).hostname !== '';
}

export function compile<T>(schema: AnySchemaObject): ValidateFunction<T> {
  return ajv.compile<T>(schema);
}

/** A validator as its callers use it: the check, then the last call's errors. */
export interface Validator<T> {
  (data: unknown): data is T;
  readonly errors: ErrorObject[] | null | undefined;
  /** Compiles it now, if it was not yet (a service warms what it serves before traffic). */
  warm(): void;
}

/**
 * A validator compiled on its first call, not at import. Every service imports every contract
 * but validates a few of them: compiled at import, billing spent 0.24 s and about 13 MB on
 * validators it never calls (the chat request's alone is 0.12 s). The order of first calls does
 * not matter (`addUsedSchema: false` above).
 */
export function lazyValidator<T>(schema: AnySchemaObject): Validator<T> {
  let compiled: ValidateFunction<T> | undefined;
  const ready = (): ValidateFunction<T> => {
    compiled ??= ajv.compile<T>(schema);
    return compiled;
  };
  const validate = (data: unknown): data is T => ready()(data);
  return Object.defineProperties(validate, {
    errors: { get: () => compiled?.errors },
    warm: { value: () => void ready() },
  }) as Validator<T>;
}

/** A schema violation rendered for clients: the field path and a message naming the rule. */
export interface SchemaViolation {
  param: string | undefined;
  message: string;
}

/** JSON pointer (`/messages/0/role`) → field path (`messages[0].role`). */
export function pointerToParam(pointer: string, child?: string): string | undefined {
  const tokens = pointer === '' ? [] : pointer.slice(1).split('/');
  if (child !== undefined) tokens.push(child);
  let path = '';
  for (const raw of tokens) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(token)) path += `[${token}]`;
    else path += path === '' ? clipParamName(token) : `.${clipParamName(token)}`;
  }
  return path === '' ? undefined : path;
}

const TYPE_NOUNS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

/** "a string", "an array of strings": from a branch schema, for type messages. */
function describeType(schema: AnySchemaObject): string {
  const type = typeof schema.type === 'string' ? schema.type : 'value';
  const items = schema.items as AnySchemaObject | undefined;
  if (type === 'array' && typeof items?.type === 'string') {
    return `an array of ${items.type === 'integer' ? 'integers' : `${items.type}s`}`;
  }
  return TYPE_NOUNS[type] ?? 'a valid value';
}

const FORMAT_NOUNS: Record<string, string> = {
  'http-url': 'an absolute http(s) URL',
  'image-url': 'a data:image/...;base64 URL or an absolute http(s) URL',
  uri: 'a valid URI',
};

function joinAlternatives(words: string[]): string {
  return words.length <= 1
    ? (words[0] ?? '')
    : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

/**
 * Turns Ajv's errors (first failure only, allErrors is off) into one violation. For `anyOf`
 * (e.g. `stop`: string or array), the branch whose type matches the value explains the failure
 * best ("stop must have at most 4 item(s)"); when no branch's type matches, the message lists the
 * accepted types.
 */
export function describeViolation(errors: readonly ErrorObject[]): SchemaViolation {
  const last = errors.at(-1);
  if (!last) return { param: undefined, message: 'request body is invalid' };
  const param = pointerToParam(last.instancePath);
  const subject = param ?? 'request body';

  switch (last.keyword) {
    case 'anyOf': {
      const branches = (last.schema as AnySchemaObject[]) ?? [];
      const inside = errors.filter((e) => e.schemaPath.startsWith(`${last.schemaPath}/`));
      const matching = inside.filter(
        (e) => !(e.keyword === 'type' && e.instancePath === last.instancePath),
      );
      const first = matching[0];
      if (first) {
        const branchIndex = first.schemaPath.slice(last.schemaPath.length + 1).split('/')[0];
        const branchPrefix = `${last.schemaPath}/${branchIndex}/`;
        return describeViolation(inside.filter((e) => e.schemaPath.startsWith(branchPrefix)));
      }
      return {
        param,
        message: `${subject} must be ${joinAlternatives(branches.map(describeType))}`,
      };
    }
    case 'oneOf': {
      // Only used for "exactly one of these fields" (branches are `{required: [field]}`).
      const fields = ((last.schema as AnySchemaObject[]) ?? []).map((b) => String(b.required?.[0]));
      if (last.params.passingSchemas === null) {
        return { param, message: `one of ${joinAlternatives(fields)} is required` };
      }
      return {
        param: pointerToParam(last.instancePath, fields.at(-1)),
        message: `${fields.join(' and ')} are mutually exclusive`,
      };
    }
    case 'not': {
      // Used as "not both of these fields" (`not: {required: [a, b]}`) or "field must be absent".
      const fields = ((last.schema as AnySchemaObject).required ?? []) as string[];
      const field = pointerToParam(last.instancePath, fields.at(-1));
      if (fields.length >= 2) {
        return { param: field, message: `${fields.join(' and ')} are mutually exclusive` };
      }
      if (fields.length === 1) return { param: field, message: `${field} is not allowed here` };
      return { param, message: `${subject} is invalid` };
    }
    case 'if':
      // The failing `then`/`else` branch's own errors precede this one and say more.
      return describeViolation(errors.slice(0, -1));
    case 'discriminator': {
      // A chat role or content part type that is missing, not a string, or not one we know.
      const tag = String(last.params.tag);
      const field = pointerToParam(last.instancePath, tag);
      if (last.params.error === 'mapping') {
        return { param: field, message: `${field} must be one of: ${tagValues(last, tag)}` };
      }
      return last.params.tagValue === undefined
        ? { param: field, message: `${field} is required` }
        : { param: field, message: `${field} must be a string` };
    }
    case 'required': {
      const field = pointerToParam(last.instancePath, String(last.params.missingProperty));
      return { param: field, message: `${field} is required` };
    }
    case 'additionalProperties': {
      const field = pointerToParam(last.instancePath, String(last.params.additionalProperty));
      return { param: field, message: `${field} is not a supported field` };
    }
    case 'type': {
      const expected = String(last.params.type);
      if (param === undefined) return { param, message: 'request body must be a JSON object' };
      return { param, message: `${param} must be ${TYPE_NOUNS[expected] ?? expected}` };
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return {
        param,
        message: `${subject} must be ${last.params.comparison} ${last.params.limit}`,
      };
    case 'minItems':
      return { param, message: `${subject} must have at least ${last.params.limit} item(s)` };
    case 'maxItems':
      return { param, message: `${subject} must have at most ${last.params.limit} item(s)` };
    case 'uniqueItems':
      return { param, message: `${subject} must not list an item twice` };
    case 'contains': {
      const wanted = (last.schema as AnySchemaObject | undefined)?.const;
      return { param, message: `${subject} must include ${JSON.stringify(wanted)}` };
    }
    case 'minLength':
      return last.params.limit === 1
        ? { param, message: `${subject} must not be empty` }
        : { param, message: `${subject} must be at least ${last.params.limit} characters long` };
    case 'maxLength':
      return { param, message: `${subject} must be at most ${last.params.limit} characters long` };
    case 'enum':
      return {
        param,
        message: `${subject} must be one of: ${(last.params.allowedValues as unknown[]).join(', ')}`,
      };
    case 'const':
      return { param, message: `${subject} must be ${JSON.stringify(last.params.allowedValue)}` };
    case 'pattern':
      return { param, message: `${subject} does not have the required form` };
    case 'format':
      return {
        param,
        message: `${subject} must be ${FORMAT_NOUNS[String(last.params.format)] ?? 'valid'}`,
      };
    default:
      return { param, message: `${subject} is invalid (${last.keyword})` };
  }
}

/** The values a discriminated union's branches take for `tag`, in schema order. */
function tagValues(error: ErrorObject, tag: string): string {
  const branches = ((error.parentSchema as AnySchemaObject | undefined)?.oneOf ??
    []) as AnySchemaObject[];
  return branches.map((branch) => String(branch.properties?.[tag]?.const)).join(', ');
}

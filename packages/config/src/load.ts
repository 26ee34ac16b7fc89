import { isIP } from 'node:net';
import type { Static, TObject } from '@sinclair/typebox';
import AjvModule from 'ajv';
import formatsModule from 'ajv-formats';
import { isKeyringSpec } from '@gateway/crypto';

// ajv and ajv-formats are CommonJS; under NodeNext their default export is the module object.
const Ajv = AjvModule.default;
const addFormats = formatsModule.default;

/** Every configuration problem found at start, reported together. Values are never echoed. */
export class ConfigError extends Error {
  constructor(
    readonly service: string,
    readonly problems: readonly string[],
  ) {
    super(`invalid configuration for ${service}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const ajv = new Ajv({ allErrors: true, coerceTypes: true, useDefaults: true, strict: true });
addFormats(ajv);
// The message ajv gives is `must match format "keyring"`: the value itself is never echoed.
ajv.addFormat('keyring', { type: 'string', validate: isKeyringSpec });
ajv.addFormat('address-list', { type: 'string', validate: isAddressList });

// The names Express's `trust proxy` (proxy-addr) accepts besides addresses and ranges.
const ADDRESS_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * Format `address-list`: comma-separated IPv4/IPv6 addresses, CIDR ranges (`10.0.0.0/8`,
 * `fd00::/8`) or the names `loopback`, `linklocal`, `uniquelocal`; empty for none.
 */
export function isAddressList(value: string): boolean {
  if (value.trim() === '') return true;
  return value.split(',').every((item) => {
    const entry = item.trim();
    if (ADDRESS_RANGE_NAMES.has(entry)) return true;
    const [address = '', prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    if (family === 0 || rest.length > 0) return false;
    if (prefix === undefined) return true;
    return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
  });
}

/** Takes the schema's keys from the environment; empty strings count as unset. */
function pickEnv(schema: TObject, env: NodeJS.ProcessEnv): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(schema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') picked[key] = value;
  }
  return picked;
}

function describe(error: {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}): string {
  if (error.keyword === 'required') return `${String(error.params.missingProperty)}: is required`;
  const key = error.instancePath.replace(/^\//, '');
  return `${key}: ${error.message ?? 'is invalid'}`;
}

/**
 * Validates a service's configuration once, at start: environment values are coerced to the
 * schema's types, defaults applied, every problem collected. The result is frozen.
 */
export function loadConfig<T extends TObject>(
  service: string,
  schema: T,
  env: NodeJS.ProcessEnv = process.env,
  crossCheck?: ConfigCrossCheck,
): Readonly<Static<T>> {
  const validate = ajv.compile(schema);
  const values = pickEnv(schema, env);
  const valid = validate(values);
  const problems = [
    ...(valid ? [] : (validate.errors ?? []).map(describe)),
    ...(crossCheck?.(values) ?? []),
  ];
  if (problems.length > 0) throw new ConfigError(service, [...new Set(problems)].sort());
  return Object.freeze(values) as Readonly<Static<T>>;
}

/**
 * Rules between settings a schema cannot state (a setting required only when another has some
 * value): the problems, in the schema's words (`AMQP_URL: is required ...`). Runs on the values
 * after defaults, beside the schema's own errors, so one report lists everything.
 */
export type ConfigCrossCheck = (values: Readonly<Record<string, unknown>>) => string[];

export interface ConfigBootIo {
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  stdout: (line: string) => void;
  stderr: (line: string) => void;
  exit: (code: number) => never;
}

const defaultIo = (): ConfigBootIo => ({
  argv: process.argv,
  env: process.env,
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
  exit: (code) => process.exit(code),
});

/**
 * The composition root's first step. With `--check-config`, validates, reports and exits
 * (0 when valid); otherwise returns the config or exits 1 listing every problem.
 */
export function loadConfigOrExit<T extends TObject>(
  service: string,
  schema: T,
  io: ConfigBootIo = defaultIo(),
  crossCheck?: ConfigCrossCheck,
): Readonly<Static<T>> {
  let config: Readonly<Static<T>>;
  try {
    config = loadConfig(service, schema, io.env, crossCheck);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.stderr(error.message);
    return io.exit(1);
  }
  if (io.argv.includes('--check-config')) {
    io.stdout(`configuration of ${service} is valid`);
    return io.exit(0);
  }
  return config;
}

import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/*
 * docker-compose.yml as Docker Compose reads it, for the parts the tests check: YAML merge keys,
 * variable interpolation (`${NAME}`, `${NAME:-default}`, `${NAME-default}`, `$$`), and the
 * short and long forms of `environment` and `depends_on`.
 */

export const COMPOSE_FILE = 'docker-compose.yml';

export interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string; target?: string };
  entrypoint?: string[];
  command?: string[];
  environment: Record<string, string>;
  depends_on: Record<string, { condition: string }>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] };
  network_mode?: string;
  read_only?: boolean;
  restart?: string;
  user?: string;
  [field: string]: unknown;
}

export interface ComposeFile {
  /** The file's top-level keys, extension fields (`x-…`) included. */
  topLevelKeys: string[];
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** Compose's interpolation; `variables` stands for the shell environment and .env. */
export function interpolate(text: string, variables: Record<string, string> = {}): string {
  return text.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])((?:[^{}]|\{[^}]*\})*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (whole, name?: string, colon?: string, op?: string, fallback?: string, bare?: string) => {
      if (whole === '$$') return '$';
      const key = (name ?? bare)!;
      const value = variables[key];
      const unset = value === undefined || (colon === ':' && value === '');
      if (!unset) return value;
      if (op === '-') return interpolate(fallback ?? '', variables);
      throw new Error(`compose variable ${key} has no value and no default (${whole})`);
    },
  );
}

function interpolateAll(value: unknown, variables: Record<string, string>): unknown {
  if (typeof value === 'string') return interpolate(value, variables);
  if (Array.isArray(value)) return value.map((item) => interpolateAll(item, variables));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolateAll(item, variables)]),
    );
  }
  return value;
}

function normalizeEnvironment(value: unknown, where: string): Record<string, string> {
  if (value === undefined) return {};
  if (Array.isArray(value)) {
    return Object.fromEntries(
      value.map((item: string) => {
        const index = item.indexOf('=');
        if (index < 0) throw new Error(`${where}: environment entry without value: ${item}`);
        return [item.slice(0, index), item.slice(index + 1)];
      }),
    );
  }
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, item]) => {
      // Compose refuses booleans in environment maps; numbers become strings.
      if (typeof item !== 'string' && typeof item !== 'number') {
        throw new Error(`${where}: environment ${key} must be a string`);
      }
      return [key, String(item)];
    }),
  );
}

function normalizeDependsOn(value: unknown): Record<string, { condition: string }> {
  if (value === undefined) return {};
  if (Array.isArray(value)) {
    return Object.fromEntries(
      value.map((name: string) => [name, { condition: 'service_started' }]),
    );
  }
  return value as Record<string, { condition: string }>;
}

const asList = (value: unknown): string[] | undefined =>
  value === undefined ? undefined : Array.isArray(value) ? value.map(String) : [String(value)];

export function loadCompose(
  file = COMPOSE_FILE,
  variables: Record<string, string> = {},
): ComposeFile {
  const raw = parse(readFileSync(file, 'utf8'), { merge: true, uniqueKeys: true }) as {
    services: Record<string, Record<string, unknown>>;
    volumes?: Record<string, unknown>;
  };
  const services: Record<string, ComposeService> = {};
  for (const [name, definition] of Object.entries(raw.services)) {
    const service = interpolateAll(definition, variables) as Record<string, unknown>;
    services[name] = {
      ...service,
      environment: normalizeEnvironment(service.environment, `${file}: ${name}`),
      depends_on: normalizeDependsOn(service.depends_on),
      entrypoint: asList(service.entrypoint),
      command: asList(service.command),
    } as ComposeService;
  }
  return { topLevelKeys: Object.keys(raw), services, volumes: raw.volumes };
}

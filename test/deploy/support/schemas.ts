import { TRACING_VARIABLES } from '@gateway/observability';
import type { loadConfig } from '@gateway/config';
import {
  billingConfigSchema,
  billingMigrateConfigSchema,
} from '../../../services/billing/src/config.js';
import {
  dispatcherConfigSchema,
  dispatcherMigrateConfigSchema,
} from '../../../services/dispatcher/src/config.js';
import { edgeConfigSchema } from '../../../services/edge/src/config.js';
import {
  EDGE_SURFACES,
  SURFACE_SETTINGS,
  edgeSurfaces as surfacesOf,
  missingSurfaceSettings as missingOf,
  type EdgeSurface,
} from '../../../services/edge/src/surfaces.js';
import { workerConfigSchema } from '../../../services/inference-worker/src/config.js';

/*
 * The services' configuration schemas, read from their sources when the tests run: a variable
 * added to a schema (or made required) is checked against the manifests at once.
 */

export const GATEWAY_SERVICES = ['edge', 'billing', 'inference-worker', 'dispatcher'] as const;
export type GatewayService = (typeof GATEWAY_SERVICES)[number];

type ConfigSchema = Parameters<typeof loadConfig>[1];

export const CONFIG_SCHEMAS: Record<GatewayService, ConfigSchema> = {
  edge: edgeConfigSchema,
  billing: billingConfigSchema,
  'inference-worker': workerConfigSchema,
  dispatcher: dispatcherConfigSchema,
};

export const isGatewayService = (name: string): name is GatewayService =>
  (GATEWAY_SERVICES as readonly string[]).includes(name);

/** Every variable the service reads. */
/** The schema's variables, and the standard `OTEL_*` ones every service's tracing reads. */
export const knownKeys = (service: GatewayService): string[] => [
  ...Object.keys(CONFIG_SCHEMAS[service].properties),
  ...TRACING_VARIABLES,
];

/**
 * What each migration command reads: the owner's URL and the runtime role to grant (the
 * services with a database of their own).
 */
export const MIGRATION_SCHEMAS: Partial<Record<GatewayService, ConfigSchema>> = {
  billing: billingMigrateConfigSchema,
  dispatcher: dispatcherMigrateConfigSchema,
};

/** The services with a database, and the name of their migration one-shot in compose. */
export const MIGRATED_SERVICES = [
  ['billing', 'migrate'],
  ['dispatcher', 'dispatcher-migrate'],
] as const;

/** Every variable the service's migration command reads. */
export const migrationKeys = (service: GatewayService): string[] =>
  Object.keys((MIGRATION_SCHEMAS[service] ?? CONFIG_SCHEMAS[service]).properties);

/** Variables that must be set: in the schema's `required` and without a default. */
export function requiredKeys(service: GatewayService): string[] {
  const schema = CONFIG_SCHEMAS[service];
  return (schema.required ?? []).filter(
    (key: string) => (schema.properties[key] as { default?: unknown }).default === undefined,
  );
}

/** The port a service listens on when PORT is not set. */
export const defaultPort = (service: GatewayService): number =>
  (CONFIG_SCHEMAS[service].properties.PORT as { default: number }).default;

/** The parts of edge a process can serve and what each needs: edge's own definitions. */
export { EDGE_SURFACES, SURFACE_SETTINGS as EDGE_SURFACE_SETTINGS };

/** The surfaces an edge process with this environment serves (the schema's default if unset). */
export function edgeSurfaces(env: Record<string, string | undefined>): string[] {
  const setting = env.EDGE_SURFACES ?? edgeConfigSchema.properties.EDGE_SURFACES.default;
  return [...surfacesOf(String(setting))];
}

/** The settings an edge process with this environment would stop at start for lack of. */
export function missingSurfaceSettings(env: Record<string, string | undefined>): string[] {
  return missingOf(new Set(edgeSurfaces(env) as EdgeSurface[]), env);
}

#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { createStandInModelNode } from './model-node.js';
import { createStandInProvider } from './provider.js';

/*
 * gateway-stand-in: runs a stand-in model node or external provider as a process, for local
 * mode and benchmarks. Prints one JSON `listening` line with the bound port (what the repo's
 * spawnService waits for), and closes on SIGTERM/SIGINT.
 */

const USAGE = `usage:
  gateway-stand-in node [--port N] [--host 127.0.0.1] [--first-token-latency-ms N]
                        [--tokens-per-second N] [--models a,b]
  gateway-stand-in provider --api-key K --models a,b [--port N] [--host 127.0.0.1]
                        [--refuse-reasoning-none a,b] [--first-token-latency-ms N]
                        [--tokens-per-second N]
PORT and HOST from the environment are used when the flags are absent.`;

const OPTIONS = {
  port: { type: 'string' },
  host: { type: 'string' },
  'first-token-latency-ms': { type: 'string' },
  'tokens-per-second': { type: 'string' },
  models: { type: 'string' },
  'api-key': { type: 'string' },
  'refuse-reasoning-none': { type: 'string' },
  help: { type: 'boolean' },
} as const;

function log(fields: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ level: 30, time: Date.now(), ...fields })}\n`);
}

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

function integer(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) fail(`--${name} must be a non-negative integer`);
  return parsed;
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}

async function start(): Promise<{ service: string; port: number; close(): Promise<void> }> {
  const { values, positionals } = parseArgs({ options: OPTIONS, allowPositionals: true });
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const common = {
    host: values.host ?? (process.env.HOST || '127.0.0.1'),
    port: integer('port', values.port ?? process.env.PORT) ?? 0,
    firstTokenLatencyMs: integer('first-token-latency-ms', values['first-token-latency-ms']),
    tokensPerSecond: integer('tokens-per-second', values['tokens-per-second']),
  };
  const [command, ...rest] = positionals;
  if (rest.length > 0) fail(`unexpected arguments: ${rest.join(' ')}`);
  if (command === 'node') {
    const models = list(values.models);
    const node = await createStandInModelNode({
      ...common,
      models: models.length > 0 ? models : null,
    });
    return { service: 'stand-in-node', ...node };
  }
  if (command === 'provider') {
    const apiKey = values['api-key'] ?? fail('--api-key is required for the provider');
    const refused = new Set(list(values['refuse-reasoning-none']));
    const models = list(values.models).map((id) => ({
      id,
      acceptsReasoningNone: !refused.has(id),
    }));
    if (models.length === 0) fail('--models is required for the provider');
    const provider = await createStandInProvider({ ...common, apiKey, models });
    return { service: 'stand-in-provider', ...provider };
  }
  return fail(`unknown command: ${command ?? '(none)'}`);
}

async function main(): Promise<void> {
  const running = await start();
  log({ msg: 'listening', port: running.port, service: running.service });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log({ msg: 'stopping', signal, service: running.service });
    void running.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(
    `gateway-stand-in: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});

import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from '@jest/globals';
import { secretValues } from './support/k8s-env.js';
import { buildKustomization } from './support/kustomize.js';

/*
 * The dev overlay must not ship the base's published admin token and master key: it ships no
 * Secret; k8s/overlays/dev/create-secret.sh makes gateway-secrets with random tokens and
 * keys. Run here against a stand-in for kubectl that records its arguments.
 */

const run = promisify(execFile);
const SCRIPT = path.resolve('k8s/overlays/dev/create-secret.sh');
const scratch = mkdtempSync(path.join(tmpdir(), 'dev-secret-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const PASSWORDS = {
  DEV_BILLING_PASSWORD: 'owner-pw',
  DEV_BILLING_RUNTIME_PASSWORD: 'runtime-pw',
  DEV_WORKER_LEDGER_PASSWORD: 'ledger-pw',
  DEV_EDGE_ADMISSION_PASSWORD: 'admission-pw',
  DEV_DISPATCHER_PASSWORD: 'd-owner-pw',
  DEV_DISPATCHER_RUNTIME_PASSWORD: 'd-runtime-pw',
  DEV_RABBITMQ_ADMIN_PASSWORD: 'admin-pw',
};

/** Runs the script; returns the Secret's literals it passed to `kubectl create secret`. */
async function createSecret(existing: boolean): Promise<Record<string, string> | undefined> {
  const dir = mkdtempSync(path.join(scratch, 'run-'));
  const log = path.join(dir, 'calls');
  const kubectl = path.join(dir, 'kubectl');
  writeFileSync(
    kubectl,
    [
      `#!${process.execPath}`,
      "const fs = require('node:fs');",
      'const args = process.argv.slice(2);',
      `fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify(args) + '\\n');`,
      `if (args.includes('get')) process.exit(${existing ? 0 : 1});`,
    ].join('\n'),
  );
  chmodSync(kubectl, 0o755);
  await run('bash', [SCRIPT], { env: { PATH: process.env.PATH, KUBECTL: kubectl, ...PASSWORDS } });
  const calls = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as string[]);
  const create = calls.find((args) => args.includes('secret') && args.includes('create'));
  if (!create) return undefined;
  expect(create.slice(0, 6)).toEqual([
    '-n',
    'inference-gateway-dev',
    'create',
    'secret',
    'generic',
    'gateway-secrets',
  ]);
  return Object.fromEntries(
    create
      .filter((arg) => arg.startsWith('--from-literal='))
      .map((arg) => {
        const [key, ...value] = arg.slice('--from-literal='.length).split('=');
        return [key!, value.join('=')];
      }),
  );
}

describe('k8s/overlays/dev/create-secret.sh', () => {
  const example = secretValues(buildKustomization('k8s/base'))['gateway-secrets']!;

  it("creates every key the manifests read, none with the base's published value", async () => {
    const secret = (await createSecret(false))!;
    expect(Object.keys(secret).sort()).toEqual(Object.keys(example).sort());
    for (const key of ['admin-token', 'billing-edge-token', 'billing-worker-token']) {
      expect(secret[key]).toMatch(/^[0-9a-f]{64}$/);
    }
    for (const key of ['master-key', 'encryption-key']) {
      expect(Buffer.from(secret[key]!, 'base64')).toHaveLength(32);
    }
    for (const [key, value] of Object.entries(secret)) {
      expect([key, value]).not.toEqual([key, example[key]]);
    }
    expect(secret['billing-database-url']).toBe(
      'postgres://billing_runtime:runtime-pw@postgres.dev.example.internal:5432/billing',
    );
    expect(secret['edge-amqp-url']).toMatch(
      /^amqp:\/\/gateway-edge:[0-9a-f]{64}@rabbitmq\.dev\.example\.internal:5672\/gateway-dev$/,
    );
  });

  it('makes new random values on each run', async () => {
    const [first, second] = [(await createSecret(false))!, (await createSecret(false))!];
    expect(first['master-key']).not.toBe(second['master-key']);
    expect(first['admin-token']).not.toBe(second['admin-token']);
  });

  it('leaves an existing Secret alone (a new master key would lose what was sealed)', async () => {
    expect(await createSecret(true)).toBeUndefined();
  });
});

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import OpenAI from 'openai';
import { freeLoopbackPort, freeLoopbackPortBlock } from '@gateway/testing';
import { EXIT, runCli } from '../../packages/gatewayctl/src/index.js';

/*
 * The README's first quick-start command, for real: `bash infra/local/start.sh` in a child
 * process (setup, build, then the one-process gateway with PostgreSQL from the machine's
 * binaries and the in-process bus), driven through the official openai SDK and gatewayctl, then
 * stopped with SIGINT.
 */

const READY_TIMEOUT_MS = 120_000;
let child: ChildProcess;
let output = '';
let baseUrl: string;
let apiKey: string;
let adminToken: string;
let dataDir: string;

function printed(label: string): string {
  const match = new RegExp(`${label}\\s+(\\S+)`).exec(output);
  if (!match) throw new Error(`"${label}" not printed:\n${output}`);
  return match[1]!;
}

async function cli(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCli([...argv, '--url', baseUrl], {
    env: { GATEWAY_ADMIN_TOKEN: adminToken },
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
  });
  const json = (): Record<string, unknown> => {
    if (code !== EXIT.ok) throw new Error(`gatewayctl ${argv.join(' ')} exited ${code}: ${stderr}`);
    return JSON.parse(stdout) as Record<string, unknown>;
  };
  return { code, stdout, stderr, json };
}

function dashboardPost(path: string, body: unknown) {
  return fetch(`${baseUrl}/dashboard/api${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Origin: baseUrl },
    body: JSON.stringify(body),
  });
}

/** Alive and not a zombie (this sandbox's init may not reap daemonised children at once). */
function isRunning(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[2] !== 'Z';
  } catch {
    return false;
  }
}

const DASHBOARD_BUILD = 'apps/dashboard/dist/index.html';
let dashboardBuiltAtMs: number;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'gateway-local-'));
  // PostgreSQL runs as an unprivileged user when the tests run as root: let it in.
  chmodSync(dataDir, 0o755);
  // A free block of ports (the gateway uses base..base+3 and base+10..11), outside the ephemeral
  // range where other tests' outgoing connections would take them.
  const base = await freeLoopbackPortBlock([0, 1, 2, 3, 10, 11]);
  dashboardBuiltAtMs = statSync(DASHBOARD_BUILD).mtimeMs;
  child = spawn('bash', ['infra/local/start.sh'], {
    env: {
      ...process.env,
      GATEWAY_DATA_DIR: dataDir,
      GATEWAY_PORT_BASE: String(base),
      GATEWAY_POSTGRES_PORT: String(await freeLoopbackPort()),
      DATABASE_URL: '',
      AMQP_URL: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk) => void (output += String(chunk)));
  child.stderr!.on('data', (chunk) => void (output += String(chunk)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`not ready in time:\n${output}`)),
      READY_TIMEOUT_MS,
    );
    child.once('exit', (code) => reject(new Error(`exited ${code} before ready:\n${output}`)));
    const poll = setInterval(() => {
      if (output.includes('Ctrl-C stops everything')) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve();
      }
    }, 100);
  });
  baseUrl = printed('Inference gateway ready in [\\d.]+ s:');
  apiKey = printed('demo API key');
  adminToken = printed('admin token');
}, READY_TIMEOUT_MS + 10_000);

afterAll(async () => {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
  // Each run's data directory holds a PostgreSQL cluster (~55 MB): left behind, they fill /tmp.
  rmSync(dataDir, { recursive: true, force: true });
});

describe('local gateway (infra/local/start.sh)', () => {
  it('leaves an up-to-date dashboard build in place (browser tests beside it serve from there)', () => {
    // Vite empties apps/dashboard/dist before it writes: a rebuild here once took a page's
    // chunk from under a browser test running at the same time. CI builds before the tests.
    expect(statSync(DASHBOARD_BUILD).mtimeMs).toBe(dashboardBuiltAtMs);
  });

  it('starts the demo account with some usage, so the dashboard charts are not empty', async () => {
    // First in this file: nothing else has used the demo key yet.
    const response = await fetch(`${baseUrl}/v1/usage?group_by=model`, {
      headers: { Authorization: `Bearer ${apiKey}` },
    });
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as { data: { model: string; requests: number }[] };
    expect(data).toEqual([expect.objectContaining({ model: 'demo/chat-small', requests: 3 })]);
  });

  it('prints the dashboard URL and a demo owner who can sign in there', async () => {
    expect(printed('\\n  dashboard')).toBe(`${baseUrl}/dashboard/`);
    const response = await dashboardPost('/session', {
      email: printed('demo owner'),
      password: printed('\\n  password'),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ account: { id: printed('demo account') } });
    // Development over http://127.0.0.1: the cookie cannot be Secure, and is still httpOnly.
    expect(response.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict$/);
  });

  it('gatewayctl: invites an owner and creates an operator user who can sign in', async () => {
    const account = String((await cli('accounts', 'create', 'dash-test', '--json')).json().id);
    const invitation = (
      await cli('invitations', 'create', account, 'o@example.com', '--json')
    ).json();
    expect(String(invitation.url)).toMatch(/\/dashboard\/invitation#token=[\w-]{43}$/);
    const accepted = await dashboardPost('/invitations/accept', {
      token: invitation.token,
      password: 'owner password 1',
    });
    expect(accepted.status).toBe(200);

    const created = (
      await cli('operator-users', 'create', 'ops@example.com', '--role', 'finance', '--json')
    ).json();
    expect(created).toMatchObject({ email: 'ops@example.com', role: 'finance' });
    const signIn = await dashboardPost('/session', {
      email: 'ops@example.com',
      password: created.password,
      realm: 'operator',
    });
    expect(signIn.status).toBe(200);
    expect((await cli('operator-users', 'create', 'x@example.com', '--role', 'admin')).code).toBe(
      EXIT.usage,
    );
  });

  it('answers a chat completion through the official openai SDK with the printed key', async () => {
    const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'demo/chat-small',
      messages: [{ role: 'user', content: 'Hello from the local test' }],
    });
    expect(completion.choices[0]!.message.content!.length).toBeGreaterThan(0);
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
    const service = (completion as unknown as { _service: { cost_dzd: number } })._service;
    expect(service.cost_dzd).toBeGreaterThan(0);
  });

  it('serves the dashboard at the printed address, on the API origin', async () => {
    const dashboard = printed('\\n  dashboard');
    expect(dashboard).toBe(`${baseUrl}/dashboard/`);
    const page = await fetch(dashboard);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const script = /src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(await page.text());
    expect((await fetch(`${baseUrl}${script![1]}`)).status).toBe(200);
    const session = await fetch(`${baseUrl}/dashboard/api/session`);
    expect(session.status).toBe(401);
  });

  it('gatewayctl: accounts, keys, credit, models, tokens, webhooks, deliveries, ledger, statement', async () => {
    const created = await cli('accounts', 'create', 'cli-test', '--json');
    expect(created.code).toBe(EXIT.ok);
    const accountId = String(created.json().id);
    expect((await cli('accounts', 'list')).stdout).toContain('cli-test');
    expect((await cli('accounts', 'show', accountId, '--json')).json()).toMatchObject({
      id: accountId,
      status: 'active',
    });
    expect((await cli('accounts', 'suspend', accountId, '--json')).json()).toMatchObject({
      status: 'suspended',
    });
    expect((await cli('accounts', 'unsuspend', accountId, '--json')).json()).toMatchObject({
      status: 'active',
    });
    expect((await cli('accounts', 'update', accountId, '--rate-limit', '50', '--json')).code).toBe(
      EXIT.ok,
    );

    const key = await cli('keys', 'create', accountId, 'ci', '--json');
    expect(String(key.json().key).length).toBeGreaterThan(20);
    const regenerated = await cli('keys', 'regenerate', accountId, 'ci', '--json');
    expect(regenerated.json().key).not.toBe(key.json().key);
    expect((await cli('keys', 'delete', accountId, 'ci')).code).toBe(EXIT.ok);

    const credit = [
      'credit',
      accountId,
      '12.5',
      '--reference',
      'wire-1',
      '--idempotency-key',
      `cli-${accountId}`,
      '--json',
    ];
    expect((await cli(...credit)).json()).toMatchObject({ balance_dzd: 12.5 });
    expect((await cli(...credit)).json()).toMatchObject({ balance_dzd: 12.5 });

    const modelsFile = path.join(dataDir, 'models.yaml');
    writeFileSync(
      modelsFile,
      [
        '- id: cli/chat',
        '  kind: chat',
        '  provider: node',
        '  upstream_model: m',
        '  input_price_dzd_per_m: 1',
        '  output_price_dzd_per_m: 2',
        '  max_output_tokens: 64',
        '',
      ].join('\n'),
    );
    expect((await cli('models', 'put', '--file', modelsFile)).code).toBe(EXIT.ok);
    expect((await cli('models', 'list')).stdout).toContain('cli/chat');

    const jwt = await fetch(`${baseUrl}/v1/scoped-jwt`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ api_key_name: 'demo' }),
    });
    const { token } = (await jwt.json()) as { token: string };
    expect((await cli('tokens', 'revoke', token, '--json')).json()).toMatchObject({
      revoked: true,
    });

    // The first secret is made on first need; a rotation keeps it signing beside the new one.
    expect((await cli('webhooks', 'secrets', accountId, '--json')).json().secrets).toHaveLength(1);
    const rotated = await cli('webhooks', 'rotate', accountId, '--json');
    expect(String(rotated.json().secret)).toMatch(/^whsec_/);
    expect((await cli('webhooks', 'secrets', accountId, '--json')).json().secrets).toHaveLength(2);
    // Ending the previous secret's window now leaves the current one alone.
    const expired = (await cli('webhooks', 'expire-previous', accountId, '--json')).json();
    expect(expired).toMatchObject({ expired: 1, secrets: [{ secret: rotated.json().secret }] });
    expect((await cli('webhooks', 'secrets', accountId, '--json')).json().secrets).toHaveLength(1);
    // Rotations are limited per account and hour (5 by default; one made above).
    for (let i = 0; i < 4; i++) expect((await cli('webhooks', 'rotate', accountId)).code).toBe(0);
    const limited = await cli('webhooks', 'rotate', accountId);
    expect(limited.code).toBe(EXIT.refused);
    expect(limited.stderr).toMatch(/\(rate_limit_exceeded\); retry after \d+ s/);
    expect((await cli('webhooks', 'secrets', accountId, '--json')).json().secrets).toHaveLength(2);
    expect((await cli('deliveries', 'list', accountId, '--json')).json()).toMatchObject({
      deliveries: [],
    });
    expect(
      (await cli('deliveries', 'redeliver', 'whd_00000000-0000-4000-8000-000000000000')).code,
    ).toBe(EXIT.refused);

    expect((await cli('ledger', 'check')).stdout).toContain('ok');
    const statementFile = path.join(dataDir, 'statement.csv');
    expect((await cli('statement', accountId, '--out', statementFile)).code).toBe(EXIT.ok);
    expect(readFileSync(statementFile, 'utf8')).toContain('opening_balance');
  });

  it('gatewayctl exits with codes that say what failed', async () => {
    expect((await cli('accounts', 'show', 'usr_doesnotexist00000000')).code).toBe(EXIT.refused);
    expect((await cli('credit', 'acct', 'ten')).code).toBe(EXIT.usage);
    expect((await cli('no-such-command')).code).toBe(EXIT.usage);
    const bin = spawnSync(
      process.execPath,
      ['packages/gatewayctl/dist/cli.js', 'ledger', 'check', '--url', baseUrl],
      {
        env: { ...process.env, GATEWAY_ADMIN_TOKEN: 'wrong-token' },
        encoding: 'utf8',
      },
    );
    expect(bin.status).toBe(EXIT.unauthorized);
    expect(bin.stderr).toContain('admin token');
    const unreachable = spawnSync(
      process.execPath,
      ['packages/gatewayctl/dist/cli.js', 'ledger', 'check', '--url', 'http://127.0.0.1:9'],
      {
        env: { ...process.env, GATEWAY_ADMIN_TOKEN: adminToken },
        encoding: 'utf8',
      },
    );
    expect(unreachable.status).toBe(EXIT.unavailable);
  });

  it('stops every part on SIGINT and exits 0', async () => {
    const pidFile = path.join(dataDir, 'postgres', 'data', 'postmaster.pid');
    const postgresPid = existsSync(pidFile)
      ? Number(readFileSync(pidFile, 'utf8').split('\n')[0])
      : undefined;
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(postgresPid).toBeDefined();
    expect(isRunning(postgresPid!)).toBe(false);
  }, 30_000);
});

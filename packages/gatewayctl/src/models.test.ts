import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EXIT, helpText } from './index.js';
import { cliAt, startStandIn } from './stand-in.suite.js';

/*
 * `models list` and `models put` against a stand-in operator API on 127.0.0.1 (the real
 * gateway: test/local/local-gateway.test.ts): the modalities column, and the README's vision
 * model sent through unchanged.
 */

const MODELS = [
  {
    id: 'acme/vision',
    kind: 'chat',
    provider: 'node',
    protocol: 'openai',
    input_modalities: ['text', 'image'],
    image_tokens: 1445,
    remote_images: false,
    input_price_dzd_per_m: 1500,
    output_price_dzd_per_m: 3000,
    max_output_tokens: 4096,
  },
  // A gateway older than the media fields answers without them.
  {
    id: 'acme/old',
    kind: 'chat',
    provider: 'node',
    input_price_dzd_per_m: 1,
    output_price_dzd_per_m: 2,
    max_output_tokens: 64,
  },
];

let standIn: Awaited<ReturnType<typeof startStandIn>>;
let dir: string;
const puts: { url: string; body: unknown }[] = [];

beforeAll(async () => {
  standIn = await startStandIn((request, response, text) => {
    response.setHeader('Content-Type', 'application/json');
    if (request.method === 'GET' && request.url === '/admin/v1/models') {
      return void response.end(JSON.stringify({ object: 'list', models: MODELS }));
    }
    const body = JSON.parse(text) as Record<string, unknown>;
    puts.push({ url: request.url!, body });
    const id = decodeURIComponent(request.url!.slice('/admin/v1/models/'.length));
    response.end(JSON.stringify({ id, ...body, updated_at: '2026-11-24T10:00:00Z' }));
  });
  dir = mkdtempSync(path.join(tmpdir(), 'gatewayctl-models-'));
});

afterAll(async () => {
  await standIn.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (...argv: string[]) => cliAt(standIn.baseUrl, argv);

describe('gatewayctl models', () => {
  it('lists each model with its input modalities', async () => {
    const { code, stdout } = await cli('models', 'list');
    expect(code).toBe(EXIT.ok);
    const [header, vision, old] = stdout.trimEnd().split('\n');
    const columns = header!.split(/\s+/);
    expect(columns).toEqual([
      'ID',
      'KIND',
      'PROVIDER',
      'PROTOCOL',
      'INPUT_MODALITIES',
      'INPUT_PRICE_DZD_PER_M',
      'OUTPUT_PRICE_DZD_PER_M',
      'MAX_OUTPUT_TOKENS',
    ]);
    expect(vision!.split(/\s+/)[4]).toBe('text,image');
    expect(old!.split(/\s+/)[4]).toBe('-');
    // --json is the API's answer, arrays included.
    const json = JSON.parse((await cli('models', 'list', '--json')).stdout) as {
      models: { input_modalities?: string[] }[];
    };
    expect(json.models[0]!.input_modalities).toEqual(['text', 'image']);
  });

  it("puts the README's vision model with its media fields unchanged", async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const yaml = /```yaml\n([\s\S]*?)```/.exec(readme)![1]!;
    const file = path.join(dir, 'models.yaml');
    writeFileSync(file, yaml);
    const { code, stdout, stderr } = await cli('models', 'put', '--file', file);
    expect({ code, stderr }).toEqual({ code: EXIT.ok, stderr: '' });
    expect(stdout).toContain('acme/vision');
    expect(puts.at(-1)).toEqual({
      url: '/admin/v1/models/acme/vision',
      body: expect.objectContaining({
        input_modalities: ['text', 'image'],
        image_tokens: 1445,
        remote_images: false,
      }),
    });
  });

  it('documents the media fields in its help', () => {
    const help = helpText();
    for (const field of ['input_modalities', 'image_tokens', 'remote_images']) {
      expect(help).toContain(field);
    }
  });
});

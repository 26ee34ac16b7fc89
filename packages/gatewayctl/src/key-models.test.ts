import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ApiKeyModelsView } from '@gateway/contracts';
import { EXIT } from './index.js';
import { cliAt, startStandIn } from './stand-in.suite.js';

/* `key-models set|get` against a stand-in operator API on 127.0.0.1: paths, bodies, output. */

let standIn: Awaited<ReturnType<typeof startStandIn>>;
let sent: { method: string; url: string; body: unknown }[] = [];

beforeAll(async () => {
  standIn = await startStandIn((request, response, text) => {
    const body = text === '' ? undefined : (JSON.parse(text) as { models: string[] });
    sent.push({ method: request.method!, url: request.url!, body });
    const view: ApiKeyModelsView = {
      object: 'api_key_models',
      api_key: 'prod',
      models: body?.models ?? ['org/a', 'org/b'],
    };
    response.setHeader('Content-Type', 'application/json');
    response.end(JSON.stringify(view));
  });
});

beforeEach(() => {
  sent = [];
});

afterAll(async () => {
  await standIn.close();
});

const cli = (...argv: string[]) => cliAt(standIn.baseUrl, argv);

describe('gatewayctl key-models', () => {
  it("sets a key's models, or any model with --any, and prints the list", async () => {
    const set = await cli('key-models', 'set', 'usr_1', 'prod', 'org/a', 'org/b');
    expect([set.code, set.stderr]).toEqual([EXIT.ok, '']);
    expect(set.stdout).toMatch(/^models\s+org\/a org\/b$/m);
    const any = await cli('key-models', 'set', 'usr_1', 'prod', '--any');
    expect(any.stdout).toMatch(/^models\s+\(any\)$/m);
    expect(sent).toEqual([
      {
        method: 'PUT',
        url: '/admin/v1/accounts/usr_1/api-keys/prod/models',
        body: { models: ['org/a', 'org/b'] },
      },
      { method: 'PUT', url: '/admin/v1/accounts/usr_1/api-keys/prod/models', body: { models: [] } },
    ]);
  });

  it('reads them', async () => {
    const got = await cli('key-models', 'get', 'usr_1', 'prod', '--json');
    expect(JSON.parse(got.stdout)).toEqual({
      object: 'api_key_models',
      api_key: 'prod',
      models: ['org/a', 'org/b'],
    });
    expect(sent.map(({ method, url }) => `${method} ${url}`)).toEqual([
      'GET /admin/v1/accounts/usr_1/api-keys/prod/models',
    ]);
  });

  it('refuses models together with --any, or neither, before sending anything', async () => {
    const both = await cli('key-models', 'set', 'usr_1', 'prod', 'org/a', '--any');
    const neither = await cli('key-models', 'set', 'usr_1', 'prod');
    expect([both.code, neither.code]).toEqual([EXIT.usage, EXIT.usage]);
    expect(sent).toEqual([]);
  });
});

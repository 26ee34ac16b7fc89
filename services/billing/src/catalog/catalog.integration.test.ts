import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { modelToJson } from './catalog.js';
import { gatewayErrorOf, setUpIdentity, type IdentityHarness } from '../identity/fixtures.suite.js';

let h: IdentityHarness;
const catalog = () => h.identity.catalog;

const body = (extra: Record<string, unknown> = {}) => ({
  kind: 'chat',
  provider: 'node',
  upstream_model: 'llama-3.1-8b',
  input_price_dzd_per_m: 150,
  output_price_dzd_per_m: 600.5,
  max_output_tokens: 8192,
  nodes: [{ url: 'http://127.0.0.1:9000', weight: 2 }, { url: 'https://node-b.internal/v1' }],
  ...extra,
});

beforeAll(async () => {
  h = await setUpIdentity();
});

afterAll(async () => {
  await h?.close();
});

describe('catalog', () => {
  it('puts and gets a model whose id contains slashes, prices converted to µDZD', async () => {
    const id = 'meta-llama/Llama-3.1-8B-Instruct';
    const put = await catalog().put(id, body());
    expect(put).toMatchObject({
      id,
      kind: 'chat',
      provider: 'node',
      protocol: 'openai',
      upstreamModel: 'llama-3.1-8b',
      inputPriceMicroDzdPerM: 150_000_000n,
      outputPriceMicroDzdPerM: 600_500_000n,
      maxOutputTokens: 8192,
      nodes: [{ url: 'http://127.0.0.1:9000', weight: 2 }, { url: 'https://node-b.internal/v1' }],
    });
    const got = await catalog().get(id);
    expect(got).toEqual(put);
    expect(modelToJson(got)).toEqual({
      id,
      kind: 'chat',
      provider: 'node',
      protocol: 'openai',
      upstream_model: 'llama-3.1-8b',
      input_price_dzd_per_m: 150,
      output_price_dzd_per_m: 600.5,
      max_output_tokens: 8192,
      input_modalities: ['text'],
      image_tokens: 1445,
      remote_images: false,
      nodes: [{ url: 'http://127.0.0.1:9000', weight: 2 }, { url: 'https://node-b.internal/v1' }],
      updated_at: got.updatedAt.toISOString(),
    });
    const { rows } = await h.sql.query(
      'SELECT input_price_micro_dzd_per_m::text AS p FROM models WHERE id = $1',
      [id],
    );
    expect(rows[0].p).toBe('150000000');
  });

  it('replaces a model on a second put (PUT semantics: omitted fields take defaults)', async () => {
    const id = 'org/replaced';
    await catalog().put(
      id,
      body({ protocol: 'tgi', input_modalities: ['text', 'image'], remote_images: true }),
    );
    const replaced = await catalog().put(id, {
      kind: 'embedding',
      provider: 'external',
      upstream_model: 'embed-v2',
      input_price_dzd_per_m: 0.000001,
      output_price_dzd_per_m: 0,
      max_output_tokens: 1,
    });
    expect(replaced).toMatchObject({
      kind: 'embedding',
      provider: 'external',
      protocol: 'openai',
      inputPriceMicroDzdPerM: 1n,
      outputPriceMicroDzdPerM: 0n,
      nodes: [],
      inputModalities: ['text'],
      imageTokens: 1445,
      remoteImages: false,
    });
    expect(await catalog().get(id)).toEqual(replaced);
  });

  it('stores what a model reads besides text', async () => {
    const id = 'org/vision';
    const put = await catalog().put(
      id,
      body({ input_modalities: ['text', 'image', 'file'], image_tokens: 765, remote_images: true }),
    );
    expect(put).toMatchObject({
      inputModalities: ['text', 'image', 'file'],
      imageTokens: 765,
      remoteImages: true,
    });
    expect(modelToJson(await catalog().get(id))).toMatchObject({
      input_modalities: ['text', 'image', 'file'],
      image_tokens: 765,
      remote_images: true,
    });
  });

  it('lists the catalog by id', async () => {
    await catalog().put('zz/last', body());
    await catalog().put('aa/first', body());
    const ids = (await catalog().list()).map((m) => m.id);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(expect.arrayContaining(['aa/first', 'zz/last']));
  });

  it('answers model_not_found for unknown ids', async () => {
    const error = await gatewayErrorOf(catalog().get('org/unknown'));
    expect(error).toMatchObject({
      code: 'model_not_found',
      message: "Model 'org/unknown' not found",
      param: 'model',
    });
    expect(await catalog().find('org/unknown')).toBeNull();
  });

  it('validates the body', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [body({ kind: 'poem' }), 'kind'],
      [body({ provider: 'cloud' }), 'provider'],
      [body({ protocol: 'grpc' }), 'protocol'],
      [body({ input_price_dzd_per_m: -1 }), 'input_price_dzd_per_m'],
      [body({ output_price_dzd_per_m: '5' }), 'output_price_dzd_per_m'],
      [body({ input_price_dzd_per_m: 0.0000001 }), 'input_price_dzd_per_m'],
      [body({ max_output_tokens: 0 }), 'max_output_tokens'],
      [body({ max_output_tokens: 1_000_001 }), 'max_output_tokens'],
      [body({ max_output_tokens: 10.5 }), 'max_output_tokens'],
      [body({ nodes: [{ url: 'ftp://x' }] }), 'nodes[0].url'],
      [body({ nodes: [{ url: 'not a url' }] }), 'nodes[0].url'],
      [body({ nodes: [{ url: 'http://x', weight: 0 }] }), 'nodes[0].weight'],
      [body({ nodes: [{ url: 'http://x', extra: 1 }] }), 'nodes[0].extra'],
      [body({ nodes: 'http://x' }), 'nodes'],
      [body({ upstream_model: '' }), 'upstream_model'],
      [body({ input_modalities: ['image'] }), 'input_modalities'],
      [body({ input_modalities: ['text', 'text'] }), 'input_modalities'],
      [body({ input_modalities: ['text', 'video'] }), 'input_modalities[1]'],
      [body({ input_modalities: [] }), 'input_modalities'],
      [body({ image_tokens: 0 }), 'image_tokens'],
      [body({ image_tokens: 100_001 }), 'image_tokens'],
      [body({ remote_images: 'yes' }), 'remote_images'],
      [body({ surprise: true }), 'surprise'],
    ];
    for (const [bad, param] of cases) {
      const error = await gatewayErrorOf(catalog().put('org/valid', bad));
      expect({ param, error }).toMatchObject({
        param,
        error: { code: 'invalid_request_body', param },
      });
    }
    const missing = { ...body() } as Record<string, unknown>;
    delete missing.max_output_tokens;
    expect(await gatewayErrorOf(catalog().put('org/valid', missing))).toMatchObject({
      code: 'invalid_request_body',
    });
    expect(await catalog().find('org/valid')).toBeNull();
  });

  it('validates the id', async () => {
    for (const id of ['', '/lead', 'trail/', 'a//b', 'has space', 'x'.repeat(257), 'é/model']) {
      expect(await gatewayErrorOf(catalog().put(id, body()))).toMatchObject({
        code: 'invalid_request_body',
        param: 'model',
      });
    }
    for (const id of ['llama3.1:8b', 'BAAI/bge-m3', 'a/b/c', 'x'.repeat(256), 'org/model@v2+q4']) {
      await expect(catalog().put(id, body())).resolves.toMatchObject({ id });
    }
  });
});

// The demo data and the seeding steps, shared by the local gateway (infra/local/local-seed.mjs,
// through billing's internal operator API) and compose's one-shot (infra/demo/seed-demo.mjs,
// through edge's operator API): the same catalog, account, key and credit, so one README curl
// works against either. Only the transport differs (base URL and auth header). Plain Node 20,
// no dependencies: compose runs it in the stock node image with only this directory mounted.

export const DEMO_ACCOUNT = 'demo';
export const DEMO_KEY = 'demo';
export const DEMO_CHAT_MODEL = 'demo/chat-small';

/**
 * The operator API behind `baseUrl` (`…/admin/v1` on edge, `…/internal/v1/admin` on billing):
 * `call(method, path, body?, { expect, headers })` resolves with `{ status, body }` and throws
 * on a status not in `expect` (`expect: null`: any status is the caller's to judge).
 */
export function operatorClient({ baseUrl, headers, timeoutMs = 15_000 }) {
  return async (method, path, body, { expect = [200, 201], headers: extra = {} } = {}) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...headers,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...extra,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    if (expect && !expect.includes(response.status)) {
      throw new Error(`${method} ${baseUrl}${path}: HTTP ${response.status} ${text.slice(0, 300)}`);
    }
    return { status: response.status, body: text ? JSON.parse(text) : null };
  };
}

/** Realistic prices (DZD per million tokens), served by the stand-ins. */
export function demoCatalog({ nodeUrl, providerModel }) {
  const onNode = (kind, protocol, inputPrice, outputPrice, maxOutputTokens) => ({
    kind,
    provider: 'node',
    protocol,
    upstream_model: 'stand-in-model',
    input_price_dzd_per_m: inputPrice,
    output_price_dzd_per_m: outputPrice,
    max_output_tokens: maxOutputTokens,
    nodes: [{ url: nodeUrl }],
  });
  return {
    // Reads images too (data URLs; the stand-in counts 85 or 765 tokens each, by detail).
    [DEMO_CHAT_MODEL]: {
      ...onNode('chat', 'openai', 20, 60, 1024),
      input_modalities: ['text', 'image'],
    },
    'demo/base-tgi': onNode('completion', 'tgi', 15, 45, 512),
    'demo/embed-small': onNode('embedding', 'openai', 2, 0, 1),
    'ext/reasoner-mini': {
      kind: 'chat',
      provider: 'external',
      upstream_model: providerModel,
      input_price_dzd_per_m: 150,
      output_price_dzd_per_m: 600,
      max_output_tokens: 8192,
    },
  };
}

/** PUTs every demo model (idempotent); `onModel(id, model)` after each. */
export async function seedCatalog(call, catalog, onModel = () => {}) {
  for (const [id, model] of Object.entries(catalog)) {
    await call('PUT', `/models/${id}`, model);
    onModel(id, model);
  }
}

/** The demo account, found by name (re-runs) or created. */
export async function findOrCreateDemoAccount(call) {
  let cursor;
  do {
    const query = new URLSearchParams({ limit: '100', ...(cursor ? { cursor } : {}) });
    const { body } = await call('GET', `/accounts?${query}`);
    const found = body.accounts.find((account) => account.name === DEMO_ACCOUNT);
    if (found) return found;
    cursor = body.next_cursor ?? undefined;
  } while (cursor);
  return (await call('POST', '/accounts', { name: DEMO_ACCOUNT })).body;
}

/** A new raw demo key: created, or regenerated when it exists (the previous one stops working). */
export async function issueDemoKey(call, accountId) {
  const created = await call(
    'POST',
    `/accounts/${accountId}/api-keys`,
    { name: DEMO_KEY },
    { expect: [201, 409] },
  );
  if (created.status === 201) return created.body.key;
  return (await call('POST', `/accounts/${accountId}/api-keys/${DEMO_KEY}/regenerate`)).body.key;
}

/**
 * Credits the demo account once per Idempotency-Key lifetime (`<keyPrefix>-<account>`), so
 * re-running does not add up; resolves with the balance in DZD.
 */
export async function creditDemo(call, accountId, { amountDzd, reference, keyPrefix }) {
  const credit = await call(
    'POST',
    `/accounts/${accountId}/credits`,
    { amount_dzd: amountDzd, reference },
    { headers: { 'Idempotency-Key': `${keyPrefix}-${accountId}` } },
  );
  return credit.body.balance_dzd;
}

import express, { type Router } from 'express';
import {
  CreditRequestSchema,
  OPERATOR_ROUTES as R,
  type ApiKeyModelsView,
  type AccountCreateRequest,
  type AccountPatchRequest,
  type ApiKeyCreateRequest,
  GatewayError,
  createBodyValidator,
  dzdToMicroDzd,
  type DashboardApiKey,
  type CatalogModel,
  type CatalogModelList,
  type CreditRequest,
  type CreditResult,
  type IssuedApiKey,
  type OperatorAccount,
  type OperatorAccountDetail,
  type Statement,
} from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import { accountToJson, modelToJson, type ApiKeySummary } from '../identity/index.js';
import { checkBooks } from '../reports/books-check.js';
import type { BillingServices } from './internal-routes.js';
import { modelIdParam } from './internal-routes.js';
import { entryPageToWire, statementToWire } from './ledger-wire.js';
import { balanceToJson, optionalDate } from './wire.js';

/**
 * The operator API of decisions §4, served here and exposed by edge under `/admin/v1`
 * (edge checks the admin token; this router sits behind the internal credential). Its routes
 * are `OPERATOR_ROUTES`; those mounted with `serveRoute` are typed by them. The rest are
 * written out (ADR 0069): their bodies are checked by identity's rules, which name the field
 * in billing's own words, or (credit, statement) they check the account before the body or
 * answer CSV too.
 */
export function adminRoutes({ identity, ledger, periods }: BillingServices): Router {
  const router = express.Router();
  const accountView = async (id: string): Promise<OperatorAccountDetail> => {
    const account = await identity.accounts.get(id);
    const balance = balanceToJson(await ledger.getBalance(id));
    return { ...accountToJson(account), ...balance };
  };
  const accountJson = (account: Parameters<typeof accountToJson>[0]): OperatorAccount =>
    accountToJson(account);

  router.post('/accounts', async (req, res) => {
    const account = await identity.accounts.create({
      name: (req.body as Fields<AccountCreateRequest> | undefined)?.name,
    });
    res.status(201).json(accountJson(account));
  });
  serveRoute(router, R.listAccounts, async ({ req }) => {
    const limit = req.query.limit === undefined ? undefined : Number(req.query.limit);
    const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
    const search = typeof req.query.q === 'string' ? req.query.q : undefined;
    const page = await identity.accounts.list({
      ...(limit ? { limit } : {}),
      ...(cursor ? { cursor } : {}),
      ...(search ? { search } : {}),
    });
    return { accounts: page.accounts.map(accountJson), next_cursor: page.nextCursor };
  });
  serveRoute(router, R.getAccount, ({ params }) => accountView(params.id));
  router.patch('/accounts/:id', async (req, res) => {
    const body = (req.body ?? {}) as Fields<AccountPatchRequest>;
    await identity.accounts.patch(req.params.id, {
      ...(body.rate_limit_per_minute !== undefined
        ? { rateLimitPerMinute: body.rate_limit_per_minute as number }
        : {}),
      ...(body.webhook_format !== undefined
        ? { webhookFormat: body.webhook_format as 'A' | 'B' }
        : {}),
    });
    res.json(await accountView(req.params.id));
  });
  serveRoute(router, R.suspendAccount, async ({ params }) =>
    accountJson(await identity.accounts.suspend(params.id)),
  );
  serveRoute(router, R.unsuspendAccount, async ({ params }) =>
    accountJson(await identity.accounts.unsuspend(params.id)),
  );

  serveRoute(router, R.listApiKeys, async ({ params }) => ({
    api_keys: (await identity.accounts.listApiKeys(params.id)).map(apiKeyJson),
  }));
  router.post('/accounts/:id/api-keys', async (req, res) => {
    const issued: IssuedApiKey = await identity.accounts.createApiKey(req.params.id, {
      name: (req.body as Fields<ApiKeyCreateRequest> | undefined)?.name,
    });
    res.status(201).json(issued);
  });
  serveRoute(router, R.regenerateApiKey, ({ params }) =>
    identity.accounts.regenerateApiKey(params.id, params.name),
  );
  // The key's list of models (empty: any), enforced by admission's model step.
  serveRoute(router, R.getKeyModels, async ({ params: { id, name } }) =>
    keyModelsView(name, await identity.accounts.apiKeyModels(id, name)),
  );
  serveRoute(router, R.putKeyModels, async ({ params: { id, name }, body }) =>
    keyModelsView(name, await identity.accounts.setApiKeyModels(id, name, body.models)),
  );
  serveRoute(router, R.deleteApiKey, ({ params }) =>
    identity.accounts.deleteApiKey(params.id, params.name),
  );

  // The account's 404 comes before the body's 400 (a typo in the id is the first thing wrong).
  router.post(R.credit.path, async (req, res) => {
    const accountId = String(req.params.id);
    await identity.accounts.get(accountId);
    const body = validateCredit(req.body);
    const result = await ledger.credit({
      accountId,
      amountMicroDzd: creditAmountMicroDzd(body.amount_dzd),
      reference: body.reference ?? null,
      idempotencyKey: req.get('Idempotency-Key') ?? null,
    });
    const answer: CreditResult = {
      transaction_id: result.transactionId,
      ...balanceToJson(result.balance),
    };
    res.json(answer);
  });

  router.get('/accounts/:id/statement', async (req, res) => {
    await identity.accounts.get(req.params.id);
    const range = {
      from: optionalDate(req.query.from, 'from') ?? new Date(0),
      to: optionalDate(req.query.to, 'to') ?? new Date(),
    };
    if (req.accepts(['application/json', 'text/csv']) === 'text/csv') {
      res.type('text/csv').send(await ledger.statementCsv(req.params.id, range));
      return;
    }
    const statement: Statement = statementToWire(await ledger.statement(req.params.id, range));
    res.json(statement);
  });

  serveRoute(router, R.revokeScopedToken, ({ body }) =>
    identity.scopedTokens.revoke(body.token, {}),
  );

  router.get('/models', async (_req, res) => {
    const list: CatalogModelList = { models: (await identity.catalog.list()).map(modelToJson) };
    res.json(list);
  });
  router.put('/models/*modelId', async (req, res) => {
    const model = await identity.catalog.put(modelIdParam(req.params.modelId), req.body);
    res.json(modelToJson(model) satisfies CatalogModel);
  });

  serveRoute(router, R.ledgerEntries, async ({ req }) => {
    const q = req.query;
    const page = await ledger.listEntries({
      ...(typeof q.account === 'string' ? { accountId: q.account } : {}),
      ...(q.from !== undefined ? { from: optionalDate(q.from, 'from')! } : {}),
      ...(q.to !== undefined ? { to: optionalDate(q.to, 'to')! } : {}),
      ...(typeof q.cursor === 'string' ? { cursor: q.cursor } : {}),
      ...(q.limit !== undefined ? { limit: Number(q.limit) } : {}),
    });
    return entryPageToWire(page);
  });
  // The ledger's invariants, and every closed period recomputed (finance's month-end close).
  serveRoute(router, R.ledgerCheck, () => checkBooks(ledger, periods));
  return router;
}

const apiKeyJson = (key: ApiKeySummary): DashboardApiKey => ({
  name: key.name,
  created_at: key.createdAt.toISOString(),
  last_used_at: key.lastUsedAt?.toISOString() ?? null,
});

/** A body's fields as the contract names them; their values are checked by the identity rules. */
type Fields<T> = { [K in keyof T]?: unknown };

const validateCredit = createBodyValidator<CreditRequest>(CreditRequestSchema);

const keyModelsView = (name: string, models: string[]): ApiKeyModelsView => ({
  object: 'api_key_models',
  api_key: name,
  models,
});

/** The schema bounds the amount; a number's seventh decimal is found only by converting it. */
function creditAmountMicroDzd(amountDzd: number | string): bigint {
  try {
    return dzdToMicroDzd(amountDzd);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new GatewayError('invalid_request_body', `amount_dzd: ${error.message}`, {
      param: 'amount_dzd',
    });
  }
}

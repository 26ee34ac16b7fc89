import express, { type RequestHandler, type Router } from 'express';
import {
  OPEN_HOLDS_MAX,
  OPERATOR_ROUTES as R,
  type ApiKeyModelsView,
  GatewayError,
  dzdToMicroDzd,
  type DashboardApiKey,
  type OperatorAccount,
  type OperatorAccountDetail,
  type Statement,
} from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import { accountToJson, modelToJson, type ApiKeySummary } from '../identity/index.js';
import { checkBooks } from '../reports/books-check.js';
import type { BillingServices } from './internal-routes.js';
import { modelIdParam } from './internal-routes.js';
import { entryPageToWire, openHoldsToWire, statementToWire } from './ledger-wire.js';
import { balanceToJson, optionalDate } from './wire.js';

/**
 * The operator API of decisions §4, served here and exposed by edge under `/admin/v1`
 * (edge checks the admin token; this router sits behind the internal credential). Its routes
 * are `OPERATOR_ROUTES`, mounted with `serveRoute`: the contract's schema checks each body
 * first, then identity's and the catalog's own rules (uniqueness, a model's pricing) check what
 * a schema cannot. The statement alone is written out: it answers CSV too.
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

  serveRoute(router, R.createAccount, async ({ body }) =>
    accountJson(await identity.accounts.create({ name: body.name })),
  );
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
  serveRoute(router, R.patchAccount, async ({ params, body }) => {
    await identity.accounts.patch(params.id, {
      ...(body.rate_limit_per_minute !== undefined
        ? { rateLimitPerMinute: body.rate_limit_per_minute }
        : {}),
      ...(body.webhook_format !== undefined ? { webhookFormat: body.webhook_format } : {}),
    });
    return accountView(params.id);
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
  serveRoute(router, R.createApiKey, ({ params, body }) =>
    identity.accounts.createApiKey(params.id, { name: body.name }),
  );
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
  const accountExists: RequestHandler = async (req, _res, next) => {
    await identity.accounts.get(String(req.params.id));
    next();
  };
  serveRoute(
    router,
    R.credit,
    async ({ params, body, req }) => {
      const result = await ledger.credit({
        accountId: params.id,
        amountMicroDzd: creditAmountMicroDzd(body.amount_dzd),
        reference: body.reference ?? null,
        idempotencyKey: req.get('Idempotency-Key') ?? null,
      });
      return { transaction_id: result.transactionId, ...balanceToJson(result.balance) };
    },
    [accountExists],
  );

  // Hand-written: it answers CSV too (`Accept: text/csv`), which `serveRoute` does not.
  router.get(R.statement.path, async (req, res) => {
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

  // What the account's reserved total is made of: a hold that stays open is a stuck request.
  serveRoute(router, R.openHolds, async ({ params }) =>
    openHoldsToWire(await ledger.openHolds(params.id, OPEN_HOLDS_MAX)),
  );

  serveRoute(router, R.revokeScopedToken, ({ body }) =>
    identity.scopedTokens.revoke(body.token, {}),
  );

  serveRoute(router, R.listModels, async () => ({
    models: (await identity.catalog.list()).map(modelToJson),
  }));
  serveRoute(router, R.putModel, async ({ params, body }) =>
    modelToJson(await identity.catalog.put(modelIdParam(params.model), body)),
  );

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

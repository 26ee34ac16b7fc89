import express, { type Router } from 'express';
import {
  CreditRequestSchema,
  GatewayError,
  createBodyValidator,
  dzdToMicroDzd,
  microDzdToDzd,
  type CreditRequest,
} from '@gateway/contracts';
import { accountToJson, modelToJson } from '../identity/index.js';
import type { BillingServices } from './internal-routes.js';
import { modelIdParam } from './internal-routes.js';
import { balanceToJson, optionalDate, requiredString, toOperatorWire } from './wire.js';

/**
 * The operator API of decisions §4, served here and exposed by edge under `/admin/v1`
 * (edge checks the admin token; this router sits behind the internal credential).
 */
export function adminRoutes({ identity, ledger }: BillingServices): Router {
  const router = express.Router();
  const accountView = async (id: string) => {
    const account = await identity.accounts.get(id);
    const balance = balanceToJson(await ledger.getBalance(id));
    return { ...accountToJson(account), ...balance };
  };

  router.post('/accounts', async (req, res) => {
    const account = await identity.accounts.create({
      name: (req.body as { name?: unknown })?.name,
    });
    res.status(201).json(accountToJson(account));
  });
  router.get('/accounts', async (req, res) => {
    const limit = req.query.limit === undefined ? undefined : Number(req.query.limit);
    const cursor = typeof req.query.cursor === 'string' ? req.query.cursor : undefined;
    const search = typeof req.query.q === 'string' ? req.query.q : undefined;
    const page = await identity.accounts.list({
      ...(limit ? { limit } : {}),
      ...(cursor ? { cursor } : {}),
      ...(search ? { search } : {}),
    });
    res.json({ accounts: page.accounts.map(accountToJson), next_cursor: page.nextCursor });
  });
  router.get('/accounts/:id', async (req, res) => {
    res.json(await accountView(req.params.id));
  });
  router.patch('/accounts/:id', async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
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
  router.post('/accounts/:id/suspend', async (req, res) => {
    res.json(accountToJson(await identity.accounts.suspend(req.params.id)));
  });
  router.post('/accounts/:id/unsuspend', async (req, res) => {
    res.json(accountToJson(await identity.accounts.unsuspend(req.params.id)));
  });

  router.get('/accounts/:id/api-keys', async (req, res) => {
    res.json({ api_keys: toOperatorWire(await identity.accounts.listApiKeys(req.params.id)) });
  });
  router.post('/accounts/:id/api-keys', async (req, res) => {
    const issued = await identity.accounts.createApiKey(req.params.id, {
      name: (req.body as { name?: unknown })?.name,
    });
    res.status(201).json(issued);
  });
  router.post('/accounts/:id/api-keys/:name/regenerate', async (req, res) => {
    res.json(await identity.accounts.regenerateApiKey(req.params.id, req.params.name));
  });
  router.delete('/accounts/:id/api-keys/:name', async (req, res) => {
    await identity.accounts.deleteApiKey(req.params.id, req.params.name);
    res.status(204).end();
  });

  router.post('/accounts/:id/credits', async (req, res) => {
    await identity.accounts.get(req.params.id);
    const body = validateCredit(req.body);
    const amountMicroDzd = creditAmountMicroDzd(body.amount_dzd);
    const key = req.get('Idempotency-Key');
    const result = await ledger.credit({
      accountId: req.params.id,
      amountMicroDzd,
      reference: body.reference ?? null,
      idempotencyKey: key ?? null,
    });
    res.json({ transaction_id: result.transactionId, ...balanceToJson(result.balance) });
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
    res.json(toOperatorWire(await ledger.statement(req.params.id, range)));
  });

  router.post('/scoped-tokens/revoke', async (req, res) => {
    res.json(
      toOperatorWire(await identity.scopedTokens.revoke(requiredString(req.body, 'token'), {})),
    );
  });

  router.get('/models', async (_req, res) => {
    res.json({ models: (await identity.catalog.list()).map(modelToJson) });
  });
  router.put('/models/*modelId', async (req, res) => {
    res.json(modelToJson(await identity.catalog.put(modelIdParam(req.params.modelId), req.body)));
  });

  router.get('/ledger/entries', async (req, res) => {
    const q = req.query;
    const page = await ledger.listEntries({
      ...(typeof q.account === 'string' ? { accountId: q.account } : {}),
      ...(q.from !== undefined ? { from: optionalDate(q.from, 'from')! } : {}),
      ...(q.to !== undefined ? { to: optionalDate(q.to, 'to')! } : {}),
      ...(typeof q.cursor === 'string' ? { cursor: q.cursor } : {}),
      ...(q.limit !== undefined ? { limit: Number(q.limit) } : {}),
    });
    res.json(
      toOperatorWire({
        entries: page.entries.map((e) => ({ ...e, amountDzd: microDzdToDzd(e.amountMicroDzd) })),
        next_cursor: page.nextCursor,
      }),
    );
  });
  router.get('/ledger/check', async (_req, res) => {
    res.json(await ledger.checkInvariants());
  });
  return router;
}

const validateCredit = createBodyValidator<CreditRequest>(CreditRequestSchema);

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

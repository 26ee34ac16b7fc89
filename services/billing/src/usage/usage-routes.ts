import express, { type Request, type Response, type Router } from 'express';
import { allowInternalCallers } from '@gateway/runtime';
import type { Identity } from '../identity/index.js';
import { ACCOUNT_ID_PATTERN } from './query.js';
import { usageLogCsv } from './usage-csv.js';
import type { UsageService } from './usage-service.js';

/** CSV when asked by `?format=csv` or `Accept: text/csv`; JSON otherwise. */
async function sendLog(
  usage: UsageService,
  req: Request,
  res: Response,
  scope: { accountId?: string },
): Promise<void> {
  if (req.query.format === 'csv' || req.accepts(['application/json', 'text/csv']) === 'text/csv') {
    res.type('text/csv').send(await usageLogCsv(usage, req.query, scope));
    return;
  }
  res.json(await usage.log(req.query, scope));
}

/**
 * Edge's calls for one account (`GET /v1/usage` and, later, the dashboard): the account is the
 * authenticated caller's, taken from the path edge builds, never from the query string.
 */
export function accountUsageRoutes(usage: UsageService): Router {
  const router = express.Router();
  const EDGE = allowInternalCallers('edge');
  router.get('/accounts/:accountId/usage', EDGE, async (req, res) => {
    res.json(await usage.summary(req.query, { accountId: String(req.params.accountId) }));
  });
  router.get('/accounts/:accountId/usage/requests', EDGE, async (req, res) => {
    await sendLog(usage, req, res, { accountId: String(req.params.accountId) });
  });
  return router;
}

/** Operators (`/admin/v1/usage`): every account, or the one named by `?account=`. */
export function adminUsageRoutes(usage: UsageService, identity: Identity): Router {
  const router = express.Router();
  const knownAccount = async (query: Record<string, unknown>) => {
    // An operator's typo is a 404, not an empty report; a malformed id is the query's 400.
    if (typeof query.account === 'string' && ACCOUNT_ID_PATTERN.test(query.account)) {
      await identity.accounts.get(query.account);
    }
  };
  router.get('/usage', async (req, res) => {
    await knownAccount(req.query);
    res.json(await usage.summary(req.query, {}));
  });
  router.get('/usage/requests', async (req, res) => {
    await knownAccount(req.query);
    await sendLog(usage, req, res, {});
  });
  return router;
}

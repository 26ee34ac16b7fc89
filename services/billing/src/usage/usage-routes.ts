import express, { type Request, type Response, type Router } from 'express';
import { BILLING_ROUTES as R } from '@gateway/contracts';
import { callerGuard, serveBillingRoute } from '../http/billing-route.js';
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
 * Edge's calls for one account (`GET /v1/usage` and the dashboard; `BILLING_ROUTES`' `usage` and
 * `usageRequests`): the account is the authenticated caller's, taken from the path edge builds,
 * never from the query string. The request log is mounted by hand on its route's path: it
 * answers CSV instead when asked (`Accept`, `?format=csv`), which `serveRoute` does not do.
 */
export function accountUsageRoutes(usage: UsageService): Router {
  const router = express.Router();
  serveBillingRoute(router, R.usage, ({ params, req }) =>
    usage.summary(req.query, { accountId: params.accountId }),
  );
  router.get(R.usageRequests.path, callerGuard(R.usageRequests), async (req, res) => {
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

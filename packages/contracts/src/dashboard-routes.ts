import type { TSchema } from '@sinclair/typebox';
import { BudgetListSchema, BudgetPutRequestSchema, BudgetViewSchema } from './budgets-api.js';
import { DashboardScopedTokenListSchema } from './dashboard-api.js';
import {
  KeyRateLimitListSchema,
  KeyRateLimitPutRequestSchema,
  KeyRateLimitViewSchema,
} from './key-limits-api.js';
import type { Route } from './routes.js';

export * from './dashboard-owner-routes.js';
export * from './dashboard-operator-routes.js';

/*
 * Routes of the dashboard API (`/dashboard/api`, dashboard-api.ts) declared as contracts: edge
 * serves them (`serveRoute`), the dashboard app calls them (`callRoute`). Every route of the
 * API is in one of its tables: here the budget and rate limit settings and an operator's list
 * of an account's scoped tokens; sessions and owners' routes in dashboard-owner-routes.ts,
 * operators' and finance's in dashboard-operator-routes.ts (re-exported here). Owners reach
 * their own account's settings; operators (`/operator`, finance reading only) any account's.
 * The settings' shapes are the operator API's.
 */

/** A setting an API key and a scoped token each may have one of, with the account's list. */
interface Setting<View extends TSchema, Put extends TSchema, List extends TSchema> {
  view: View;
  put: Put;
  list: List;
  summary: string;
}

/** Where a setting lives: written out, so a search for a path finds its contract. */
interface SettingPaths<
  ListOwn extends string,
  OwnKey extends string,
  ListOfAccount extends string,
  AccountKey extends string,
  AccountToken extends string,
> {
  listOwn: ListOwn;
  ownKey: OwnKey;
  listOfAccount: ListOfAccount;
  accountKey: AccountKey;
  accountToken: AccountToken;
}

/**
 * Its routes: the owner's list and their keys' setting (a token's is an operator's to set), and
 * an operator's of any account's keys and tokens.
 */
function settingRoutes<
  const ListOwn extends string,
  const OwnKey extends string,
  const ListOfAccount extends string,
  const AccountKey extends string,
  const AccountToken extends string,
  View extends TSchema,
  Put extends TSchema,
  List extends TSchema,
>(
  paths: SettingPaths<ListOwn, OwnKey, ListOfAccount, AccountKey, AccountToken>,
  setting: Setting<View, Put, List>,
) {
  const { summary } = setting;
  const put = <const Path extends string>(path: Path, whose: string) =>
    ({
      method: 'PUT',
      path,
      body: setting.put,
      answer: setting.view,
      summary: `Set the ${summary} of ${whose}`,
    }) as const;
  const remove = <const Path extends string>(path: Path, whose: string) =>
    ({
      method: 'DELETE',
      path,
      status: 204,
      summary: `Remove the ${summary} of ${whose}`,
    }) as const;
  return {
    listOwn: {
      method: 'GET',
      path: paths.listOwn,
      answer: setting.list,
      summary: `The ${summary} of the session's account's keys and tokens`,
    },
    putOwnKey: put(paths.ownKey, 'one of its API keys'),
    removeOwnKey: remove(paths.ownKey, 'one of its API keys'),
    listOfAccount: {
      method: 'GET',
      path: paths.listOfAccount,
      answer: setting.list,
      summary: `The ${summary} of an account's keys and tokens`,
    },
    putAccountKey: put(paths.accountKey, "an account's API key"),
    removeAccountKey: remove(paths.accountKey, "an account's API key"),
    putAccountToken: put(paths.accountToken, "an account's scoped token"),
    removeAccountToken: remove(paths.accountToken, "an account's scoped token"),
  } as const satisfies Record<string, Route>;
}

/** Budgets (budgets-api.ts). */
export const DASHBOARD_BUDGET_ROUTES = settingRoutes(
  {
    listOwn: '/budgets',
    ownKey: '/api-keys/:name/budget',
    listOfAccount: '/operator/accounts/:id/budgets',
    accountKey: '/operator/accounts/:id/api-keys/:name/budget',
    accountToken: '/operator/accounts/:id/scoped-tokens/:tokenId/budget',
  },
  {
    view: BudgetViewSchema,
    put: BudgetPutRequestSchema,
    list: BudgetListSchema,
    summary: 'budget',
  },
);

/** Per-key rate limits (key-limits-api.ts). */
export const DASHBOARD_RATE_LIMIT_ROUTES = settingRoutes(
  {
    listOwn: '/rate-limits',
    ownKey: '/api-keys/:name/rate-limit',
    listOfAccount: '/operator/accounts/:id/rate-limits',
    accountKey: '/operator/accounts/:id/api-keys/:name/rate-limit',
    accountToken: '/operator/accounts/:id/scoped-tokens/:tokenId/rate-limit',
  },
  {
    view: KeyRateLimitViewSchema,
    put: KeyRateLimitPutRequestSchema,
    list: KeyRateLimitListSchema,
    summary: 'rate limits',
  },
);

/** An operator's view of one account (after `operatorsOnly`: finance reads too). */
export const DASHBOARD_ACCOUNT_ROUTES = {
  scopedTokens: {
    method: 'GET',
    path: '/operator/accounts/:id/scoped-tokens',
    answer: DashboardScopedTokenListSchema,
    summary:
      "An account's registered scoped tokens, newest first (?limit, ?cursor): the ids their " +
      'budgets and rate limits are set by',
  },
} as const satisfies Record<string, Route>;

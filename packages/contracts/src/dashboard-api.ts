import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import { StringEnum, dzdAmountSchema } from './schemas/common.js';

/*
 * The dashboard's API, defined once: edge serves it under `/dashboard/api` on the API's own
 * origin, authenticated by a session cookie, from billing (which owns users, sessions and the
 * data). Keys are snake_case and money is DZD as JSON numbers with up to 6 decimals, like the
 * public API; dates are ISO 8601 UTC. Every failure is the gateway's one error body
 * (`ErrorBody`).
 *
 * Sessions: the cookie (`DASHBOARD_SESSION_COOKIE`) is httpOnly and SameSite=Strict, so the
 * single-page app never sees it. Every state-changing request (POST, PUT, PATCH, DELETE) other
 * than sign-in and invitation acceptance must carry the session's `csrf_token` in the
 * `DASHBOARD_CSRF_HEADER` header and, when the browser sends one, an `Origin` equal to the API's
 * own; otherwise 403 `csrf_failed`. No session or an expired one: 401 `session_required`.
 *
 * An owner only ever reaches their own account: it comes from the session, never from a path or
 * a body. Operator routes (`/dashboard/api/operator/...`) need a session of an operator user;
 * role `finance` reads only (403 `forbidden` on writes).
 */

export const DASHBOARD_API_PREFIX = '/dashboard/api';
/**
 * The session cookie. `__Host-`: the browser accepts it only with `Secure`,
 * `Path=/` and no `Domain`, so no sibling subdomain or plain-HTTP page can set or shadow it.
 * `DASHBOARD_DEV_SESSION_COOKIE` is the plain-HTTP loopback development cookie (local mode,
 * Compose), which cannot be `Secure` and so cannot carry the prefix.
 */
export const DASHBOARD_SESSION_COOKIE = '__Host-gw_session';
export const DASHBOARD_DEV_SESSION_COOKIE = 'gw_session';
export const DASHBOARD_CSRF_HEADER = 'X-CSRF-Token';
/** Where an invitation link points; the token travels in the fragment (never sent to a server). */
export const DASHBOARD_INVITATION_PATH = '/dashboard/invitation';

/** The link an operator hands to a new owner: `<base>/dashboard/invitation#token=<token>`. */
export function dashboardInvitationUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${DASHBOARD_INVITATION_PATH}#token=${encodeURIComponent(token)}`;
}

export const DASHBOARD_LIMITS = {
  emailMaxLength: 254,
  /** Passwords: at least 12 characters (length beats composition rules), at most 256. */
  passwordMinLength: 12,
  passwordMaxLength: 256,
  /** Invitation and session tokens as sent by the client. */
  tokenMaxLength: 128,
} as const;

const closed = { additionalProperties: false } as const;
const IsoDate = Type.String({ format: 'date-time' });
const Dzd = (description: string) => Type.Number({ description });
const Email = Type.String({
  minLength: 3,
  maxLength: DASHBOARD_LIMITS.emailMaxLength,
  pattern: '^[^\\s@]+@[^\\s@]+$',
});
const Password = Type.String({
  minLength: DASHBOARD_LIMITS.passwordMinLength,
  maxLength: DASHBOARD_LIMITS.passwordMaxLength,
});
const ApiKeyName = Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$' });
/** The public balance triple (as `GET /v1/user/balance`). */
const balanceFields = {
  balance_dzd: Dzd('Posted balance.'),
  reserved_dzd: Dzd('Reserved by pending holds.'),
  available_dzd: Dzd('Balance minus reserved.'),
};

export const DASHBOARD_ROLES = ['owner', 'operator', 'finance'] as const;
export type DashboardRole = (typeof DASHBOARD_ROLES)[number];
/** Operator users' roles (`finance` reads only). */
export const OPERATOR_ROLES = ['operator', 'finance'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

// --- Session -------------------------------------------------------------------------------

/**
 * `POST /dashboard/api/session`: sign in. `realm` picks the user table: account owners
 * (default) or operator users. Wrong email or password: 401 `invalid_credentials` (the same
 * answer whether the email exists or not); too many attempts from the address or for the
 * email: 429 `rate_limit_exceeded` with `Retry-After`; too many sign-ins being checked at once
 * (a flood): 503 `service_unavailable` with `Retry-After`.
 */
export const DashboardSignInRequestSchema = Type.Object(
  {
    email: Email,
    password: Type.String({ minLength: 1, maxLength: DASHBOARD_LIMITS.passwordMaxLength }),
    realm: Type.Optional(StringEnum(['owner', 'operator'] as const)),
  },
  { $id: 'DashboardSignInRequest', ...closed },
);
export type DashboardSignInRequest = Static<typeof DashboardSignInRequestSchema>;

/**
 * `GET /dashboard/api/session` (who am I), also the answer of sign-in and invitation
 * acceptance (which set the cookie). `account` is null for operator users.
 */
export const DashboardSessionSchema = Type.Object(
  {
    user: Type.Object({
      id: Type.String(),
      email: Type.String(),
      role: StringEnum(DASHBOARD_ROLES),
    }),
    account: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }), Type.Null()]),
    /** Send it back in `X-CSRF-Token` on every state-changing request of this session. */
    csrf_token: Type.String(),
    /** The session ends at the latest at `expires_at`, or after `idle_timeout_s` unused. */
    expires_at: IsoDate,
    idle_timeout_s: Type.Integer({ minimum: 1 }),
  },
  { $id: 'DashboardSession' },
);
export type DashboardSession = Static<typeof DashboardSessionSchema>;

/**
 * A session as billing hands it to edge (billing's internal answer to sign-in and invitation
 * acceptance, never sent to the browser): the raw `token` travels this once, for edge's cookie;
 * the client gets `session`.
 */
export const DashboardStartedSessionSchema = Type.Object({
  token: Type.String(),
  session: DashboardSessionSchema,
});
export type DashboardStartedSession = Static<typeof DashboardStartedSessionSchema>;

/**
 * A session's raw token as edge passes it to billing to resolve or end the session (billing's
 * internal calls, never the browser's): in a body, since URLs end up in logs.
 */
export const DashboardSessionTokenRequestSchema = Type.Object({
  token: Type.String({ minLength: 1, maxLength: DASHBOARD_LIMITS.tokenMaxLength }),
});
export type DashboardSessionTokenRequest = Static<typeof DashboardSessionTokenRequestSchema>;

/** `DELETE /dashboard/api/session`: sign out (204; the cookie is cleared). */

// --- Invitations ---------------------------------------------------------------------------

/**
 * `POST /dashboard/api/invitations/accept`: the owner sets the first password; answers the
 * new session (200, cookie set). Unknown, used or expired token: 400 `invalid_invitation`.
 */
export const DashboardInvitationAcceptRequestSchema = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: DASHBOARD_LIMITS.tokenMaxLength }),
    password: Password,
  },
  { $id: 'DashboardInvitationAcceptRequest', ...closed },
);
export type DashboardInvitationAcceptRequest = Static<
  typeof DashboardInvitationAcceptRequestSchema
>;

/**
 * Creating an invitation: operator API `POST /admin/v1/accounts/{id}/invitations` and
 * `POST /dashboard/api/operator/accounts/{id}/invitations` (201). The token appears once.
 */
export const InvitationCreateRequestSchema = Type.Object(
  { email: Email },
  { $id: 'InvitationCreateRequest', ...closed },
);
export type InvitationCreateRequest = Static<typeof InvitationCreateRequestSchema>;

export const InvitationCreatedSchema = Type.Object(
  {
    id: Type.String(),
    account_id: Type.String(),
    email: Type.String(),
    token: Type.String(),
    /** `dashboardInvitationUrl(base, token)`. */
    url: Type.String(),
    expires_at: IsoDate,
  },
  { $id: 'InvitationCreated' },
);
export type InvitationCreated = Static<typeof InvitationCreatedSchema>;

/**
 * What billing answers for an invitation: the invitation without its link, which edge adds on
 * the public origin (`InvitationCreated`).
 */
export const InvitationIssuedSchema = Type.Omit(InvitationCreatedSchema, ['url'], {
  $id: 'InvitationIssued',
});
export type InvitationIssued = Static<typeof InvitationIssuedSchema>;

// --- Owner: overview -----------------------------------------------------------------------

/**
 * `GET /dashboard/api/overview`. Spend is what settled requests cost (the ledger's settlements),
 * days and months in UTC.
 */
export const DashboardOverviewSchema = Type.Object(
  {
    account: Type.Object({
      id: Type.String(),
      name: Type.String(),
      status: StringEnum(['active', 'suspended'] as const),
    }),
    currency: Type.Literal('DZD'),
    ...balanceFields,
    spend_today_dzd: Dzd('Settled since 00:00 UTC today.'),
    spend_month_dzd: Dzd('Settled since the 1st of this month, 00:00 UTC.'),
    as_of: IsoDate,
  },
  { $id: 'DashboardOverview' },
);
export type DashboardOverview = Static<typeof DashboardOverviewSchema>;

// --- Owner: API keys -----------------------------------------------------------------------

export const DashboardApiKeySchema = Type.Object(
  {
    name: Type.String(),
    created_at: IsoDate,
    /** Approximate: recorded at most once a minute per key. Null: never used. */
    last_used_at: Type.Union([IsoDate, Type.Null()]),
  },
  { $id: 'DashboardApiKey' },
);
export type DashboardApiKey = Static<typeof DashboardApiKeySchema>;

/** `GET /dashboard/api/api-keys`. */
export const DashboardApiKeyListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(DashboardApiKeySchema) },
  { $id: 'DashboardApiKeyList' },
);
export type DashboardApiKeyList = Static<typeof DashboardApiKeyListSchema>;

/** `POST /dashboard/api/api-keys` (201); a taken name: 409 `conflict`. */
export const DashboardApiKeyCreateRequestSchema = Type.Object(
  { name: ApiKeyName },
  { $id: 'DashboardApiKeyCreateRequest', ...closed },
);
export type DashboardApiKeyCreateRequest = Static<typeof DashboardApiKeyCreateRequestSchema>;

/**
 * Answer of create (201) and `POST /dashboard/api/api-keys/{name}/regenerate` (200): the raw key,
 * shown once. After regenerate the old key (and scoped tokens it signed) fail at once.
 * `DELETE /dashboard/api/api-keys/{name}`: 204. Unknown name: 404 `resource_not_found`.
 */
export const DashboardIssuedApiKeySchema = Type.Object(
  { name: Type.String(), key: Type.String() },
  { $id: 'DashboardIssuedApiKey' },
);
export type DashboardIssuedApiKey = Static<typeof DashboardIssuedApiKeySchema>;

/*
 * Budgets, with the operator API's shapes (budgets-api.ts):
 * - owners: `GET /dashboard/api/budgets` (`BudgetList`: the account's keys' and tokens');
 *   `PUT /dashboard/api/api-keys/{name}/budget` (`BudgetPutRequest` → `BudgetView`) and
 *   `DELETE` of it (204): an owner caps their own keys (never another account's: 404).
 * - operators: `GET /dashboard/api/operator/accounts/{id}/budgets`, and `PUT`/`DELETE` of
 *   `…/accounts/{id}/api-keys/{name}/budget` and `…/accounts/{id}/scoped-tokens/{token_id}/budget`.
 * Unknown account, key, token or budget: 404 `resource_not_found`; a bad body: 400
 * `invalid_request_body` naming the field.
 */

// --- Operators -----------------------------------------------------------------------------

export const DashboardAccountSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    status: StringEnum(['active', 'suspended'] as const),
    rate_limit_per_minute: Type.Integer(),
    webhook_format: StringEnum(['A', 'B'] as const),
    created_at: IsoDate,
  },
  { $id: 'DashboardAccount' },
);
export type DashboardAccount = Static<typeof DashboardAccountSchema>;

/**
 * `GET /dashboard/api/operator/accounts?q=&limit=&cursor=`: `q` matches an account id exactly
 * or a part of its name (case-insensitive); `next_cursor` null on the last page.
 */
export const DashboardAccountListSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(DashboardAccountSchema),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'DashboardAccountList' },
);
export type DashboardAccountList = Static<typeof DashboardAccountListSchema>;

/*
 * `POST /dashboard/api/operator/accounts` (role `operator`; 201 with the new account): body and
 * answer as the operator API's `POST /admin/v1/accounts` (`AdminAccountCreateRequest`); the owner
 * is invited afterwards.
 */

/** `GET /dashboard/api/operator/accounts/{id}`: the account with its balance. */
export const DashboardAccountDetailSchema = Type.Intersect(
  [DashboardAccountSchema, Type.Object(balanceFields)],
  { $id: 'DashboardAccountDetail' },
);
export type DashboardAccountDetail = Static<typeof DashboardAccountDetailSchema>;

/**
 * `POST /dashboard/api/operator/accounts/{id}/credits` (role `operator`): requires an
 * `Idempotency-Key` header (400 without); the same key and body credit once.
 */
export const DashboardCreditRequestSchema = Type.Object(
  {
    amount_dzd: dzdAmountSchema(),
    reference: Type.String({ minLength: 1, maxLength: 500 }),
  },
  { $id: 'DashboardCreditRequest', ...closed },
);
export type DashboardCreditRequest = Static<typeof DashboardCreditRequestSchema>;

export const DashboardCreditResultSchema = Type.Object(
  { transaction_id: Type.String(), ...balanceFields },
  { $id: 'DashboardCreditResult' },
);
export type DashboardCreditResult = Static<typeof DashboardCreditResultSchema>;

// --- Part 2: owner scoped tokens, webhooks, statement; operator console -------------------

/** Page size of the dashboard's paginated lists: `?limit=` 1..100, default 20. */
export const DASHBOARD_PAGE = { defaultLimit: 20, maxLimit: 100 } as const;

/** One page of a dashboard list, newest or oldest first as the list says. */
export interface Page<T> {
  object: 'list';
  data: T[];
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}

const page = <T extends ReturnType<typeof Type.Object>>(item: T, id: string) =>
  Type.Object(
    {
      object: Type.Literal('list'),
      data: Type.Array(item),
      next_cursor: Type.Union([Type.String(), Type.Null()]),
    },
    { $id: id },
  );

export const SCOPED_TOKEN_STATES = ['valid', 'expired', 'revoked', 'exhausted'] as const;
export type ScopedTokenState = (typeof SCOPED_TOKEN_STATES)[number];

/**
 * A registered scoped token (issued by `POST /v1/scoped-jwt` or the dashboard, or client-minted
 * and seen once). The token itself is never stored, so never shown again. `state`: revoked wins
 * over expired, expired over exhausted (limit reached by spend and pending holds).
 */
export const DashboardScopedTokenSchema = Type.Object(
  {
    id: Type.String(),
    api_key_name: Type.String(),
    origin: StringEnum(['issued', 'client'] as const),
    /** null = any model. */
    models: Type.Union([Type.Array(Type.String()), Type.Null()]),
    created_at: IsoDate,
    expires_at: IsoDate,
    revoked_at: Type.Union([IsoDate, Type.Null()]),
    spending_limit_dzd: Type.Union([Type.Number(), Type.Null()]),
    spent_dzd: Dzd('Settled spend.'),
    remaining_dzd: Type.Union([Type.Number(), Type.Null()]),
    state: StringEnum(SCOPED_TOKEN_STATES),
  },
  { $id: 'DashboardScopedToken' },
);
export type DashboardScopedToken = Static<typeof DashboardScopedTokenSchema>;

/**
 * `GET /dashboard/api/scoped-tokens?limit=&cursor=`: newest first. Create:
 * `POST /dashboard/api/scoped-tokens` with `POST /v1/scoped-jwt`'s body (201 `{token}`, shown
 * once). Revoke: `POST /dashboard/api/scoped-tokens/{id}/revoke` (200, the token; idempotent);
 * the next API call with it gets 401 `token_revoked`. Another account's id: 404.
 */
export const DashboardScopedTokenListSchema = page(
  DashboardScopedTokenSchema,
  'DashboardScopedTokenList',
);
export type DashboardScopedTokenList = Static<typeof DashboardScopedTokenListSchema>;

/**
 * `POST /dashboard/api/scoped-tokens` (201): the new token, shown once (`POST /v1/scoped-jwt`'s
 * answer, which billing gives edge as its `ScopedTokenCreated`).
 */
export const DashboardScopedTokenCreatedSchema = Type.Object(
  { token: Type.String({ pattern: '^jwt:' }) },
  { $id: 'DashboardScopedTokenCreated' },
);
export type DashboardScopedTokenCreated = Static<typeof DashboardScopedTokenCreatedSchema>;

/** A webhook signing secret as listed: never the secret itself. */
export const DashboardWebhookSecretSchema = Type.Object(
  {
    id: Type.String(),
    created_at: IsoDate,
    /** null: the current secret; else the end of its rotation window. */
    expires_at: Type.Union([IsoDate, Type.Null()]),
  },
  { $id: 'DashboardWebhookSecret' },
);
export type DashboardWebhookSecret = Static<typeof DashboardWebhookSecretSchema>;

/**
 * `GET /dashboard/api/webhooks/secrets`: the active secrets without their values, oldest first:
 * at most two, the current one (`expires_at` null) and the previous one in its rotation window.
 * `POST /dashboard/api/webhooks/secrets/reveal`: the same with `secret` (a POST, so CSRF-checked
 * and never cached or prefetched). `POST /dashboard/api/webhooks/secrets/rotate` (201): the new
 * secret (shown) and `previous_expires_at`, the end of the rotation window (null: first secret);
 * the secret that was current becomes the previous one, and a previous one still in its window
 * stops signing at once. Rotations are limited per account (dispatcher
 * `SECRET_ROTATIONS_PER_HOUR`, 5 an hour): beyond, 429 `rate_limit_exceeded` with `Retry-After`.
 */
export const DashboardWebhookSecretListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(DashboardWebhookSecretSchema) },
  { $id: 'DashboardWebhookSecretList' },
);
export type DashboardWebhookSecretList = Static<typeof DashboardWebhookSecretListSchema>;

/** A signing secret with its value (reveal, rotation). */
export const DashboardRevealedWebhookSecretSchema = Type.Object(
  { ...DashboardWebhookSecretSchema.properties, secret: Type.String() },
  { $id: 'DashboardRevealedWebhookSecret' },
);
export type DashboardRevealedWebhookSecret = Static<typeof DashboardRevealedWebhookSecretSchema>;

/** `POST /dashboard/api/webhooks/secrets/reveal`: the active secrets with their values. */
export const DashboardRevealedWebhookSecretListSchema = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(DashboardRevealedWebhookSecretSchema) },
  { $id: 'DashboardRevealedWebhookSecretList' },
);
export type DashboardRevealedWebhookSecretList = Static<
  typeof DashboardRevealedWebhookSecretListSchema
>;

/** `POST /dashboard/api/webhooks/secrets/rotate` (201). */
export const DashboardWebhookRotationSchema = Type.Object(
  {
    secret: DashboardRevealedWebhookSecretSchema,
    /** The end of the previous secret's rotation window; null: the account's first secret. */
    previous_expires_at: Type.Union([IsoDate, Type.Null()]),
  },
  { $id: 'DashboardWebhookRotation' },
);
export type DashboardWebhookRotation = Static<typeof DashboardWebhookRotationSchema>;

/**
 * `POST /dashboard/api/webhooks/secrets/expire-previous` (200, no body): ends the previous
 * secret's rotation window now; from the next attempt on, deliveries carry the current secret's
 * signature only. Answers the secrets left (the current one, without its value) and how many
 * stopped signing (`expired`: 0 when there was no previous secret, so a retry is harmless).
 */
export const DashboardWebhookExpirePreviousSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(DashboardWebhookSecretSchema),
    expired: Type.Integer({ minimum: 0 }),
  },
  { $id: 'DashboardWebhookExpirePrevious' },
);
export type DashboardWebhookExpirePrevious = Static<typeof DashboardWebhookExpirePreviousSchema>;

/** `GET` / `PUT /dashboard/api/webhooks/settings`: the payload format (decisions: A or B). */
export const DashboardWebhookSettingsSchema = Type.Object(
  { webhook_format: StringEnum(['A', 'B'] as const) },
  { $id: 'DashboardWebhookSettings', ...closed },
);
export type DashboardWebhookSettings = Static<typeof DashboardWebhookSettingsSchema>;

/**
 * One webhook delivery (`GET /dashboard/api/webhooks/deliveries?limit=&cursor=`, newest first).
 * `POST /dashboard/api/webhooks/deliveries/{id}/redeliver` (202): sends it again; another
 * account's id: 404; still retrying or purged: 409 `conflict`.
 */
export const DashboardWebhookDeliverySchema = Type.Object(
  {
    id: Type.String(),
    job_id: Type.String({
      description:
        "The job's id; an account alert's id for an alert; the response id for a response.",
    }),
    event_type: Type.String({
      description:
        '`inference.completed` (a job), the alert type, or `response.completed` (`.incomplete`, ' +
        '`.failed`, `.cancelled`) for a background response.',
    }),
    status: Type.String(),
    attempts: Type.Integer(),
    last_response_code: Type.Union([Type.Integer(), Type.Null()]),
    next_attempt_at: Type.Union([IsoDate, Type.Null()]),
    created_at: IsoDate,
  },
  { $id: 'DashboardWebhookDelivery' },
);
export type DashboardWebhookDelivery = Static<typeof DashboardWebhookDeliverySchema>;
export const DashboardWebhookDeliveryListSchema = page(
  DashboardWebhookDeliverySchema,
  'DashboardWebhookDeliveryList',
);
export type DashboardWebhookDeliveryList = Static<typeof DashboardWebhookDeliveryListSchema>;

/*
 * Statements, as the operator API's `GET /admin/v1/accounts/{id}/statement`: `?from=&to=` (ISO
 * 8601), JSON, or CSV with `Accept: text/csv` or `?format=csv`. Owners:
 * `GET /dashboard/api/statement`; operators: `GET /dashboard/api/operator/accounts/{id}/statement`.
 */

/**
 * Operators (role `operator` writes, `finance` reads), passed through to the operator API (the
 * catalog and ledger pages' answers: dashboard-console-api.ts):
 * `GET /operator/models`, `PUT /operator/models/{id}` (body as `PUT /admin/v1/models/{id}`);
 * `GET /operator/ledger/entries?account=&from=&to=&limit=&cursor=`; `GET /operator/ledger/check`;
 * `GET /operator/accounts/{id}/statement`; `GET /operator/accounts/{id}/webhook-deliveries`
 * (the dispatcher lists per account); `POST /operator/accounts/{id}/suspend|unsuspend`;
 * `PATCH /operator/accounts/{id}` with `DashboardAccountPatchRequest`.
 */
export const DashboardAccountPatchRequestSchema = Type.Object(
  { rate_limit_per_minute: Type.Integer({ minimum: 1, maximum: 100_000 }) },
  { $id: 'DashboardAccountPatchRequest', ...closed },
);
export type DashboardAccountPatchRequest = Static<typeof DashboardAccountPatchRequestSchema>;

/**
 * Usage (answers as in usage-api.ts). Owners, the session's account: `GET /dashboard/api/usage`
 * `?from=&to=&group_by=day|model|key|day,model` (`UsageList`; `day,model` feeds the overview's
 * chart) and `GET /dashboard/api/usage/requests?from=&to=&limit=&cursor=` (`UsageLogPage`), or
 * the whole range as CSV with `?format=csv` (at most `USAGE_LIMITS.csvMaxRows` rows). Operators
 * (both roles): `GET /dashboard/api/operator/usage` and `/operator/usage/requests`, the same
 * with `?account=` (all accounts when absent; an unknown one: 404).
 */

import { Type } from '@sinclair/typebox';
import type { Static } from '@sinclair/typebox';
import {
  DASHBOARD_LIMITS,
  DashboardAccountDetailSchema,
  DashboardAccountSchema,
  DashboardApiKeySchema,
  DashboardCreditResultSchema,
  DashboardIssuedApiKeySchema,
  OPERATOR_ROLES,
  type DashboardAccount,
  type DashboardAccountDetail,
  type DashboardCreditResult,
  type DashboardIssuedApiKey,
} from './dashboard-api.js';
import {
  MODEL_KINDS,
  MODEL_PROVIDERS,
  NODE_HEALTH_ERROR_KINDS,
  NODE_HEALTH_STATES,
  NODE_PROTOCOLS,
} from './schemas/catalog-names.js';
import { INPUT_MODALITIES, type InputModality } from './schemas/chat-messages.js';
import { StringEnum, dzdAmountSchema } from './schemas/common.js';
import { UsageLogPageSchema } from './usage-api.js';

/*
 * The operator API's request bodies (`/admin/v1`, decisions §4), defined once: edge validates
 * them (and documents them in its OpenAPI document), billing, which owns the data, validates the
 * ones it receives again with the same schemas and applies its finer rules (trimming,
 * uniqueness). `PUT /admin/v1/models/{model}` is `ModelPutRequestSchema` (catalog-api.ts).
 */

const closed = { additionalProperties: false } as const;

/** Per-image hold ceiling: far above any image a model bills today. */
export const IMAGE_TOKENS_MAX = 100_000;
/**
 * The reference's high-detail tile formula at its largest (2048 × 768 after scaling: 85 + 170 × 8
 * tiles), the default per-image ceiling.
 */
export const DEFAULT_IMAGE_TOKENS = 1_445;
/** What `PUT /admin/v1/models/{id}` applies when a media field is omitted (catalog-api.ts). */
export const MODEL_MEDIA_DEFAULTS = {
  input_modalities: ['text'] as InputModality[],
  image_tokens: DEFAULT_IMAGE_TOKENS,
  remote_images: false,
};

export const AccountCreateRequestSchema = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }) },
  { $id: 'AdminAccountCreateRequest', ...closed },
);
export type AccountCreateRequest = Static<typeof AccountCreateRequestSchema>;

export const AccountPatchRequestSchema = Type.Object(
  {
    rate_limit_per_minute: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    webhook_format: Type.Optional(StringEnum(['A', 'B'] as const)),
  },
  { $id: 'AdminAccountPatchRequest', ...closed },
);
export type AccountPatchRequest = Static<typeof AccountPatchRequestSchema>;

export const ApiKeyCreateRequestSchema = Type.Object(
  { name: Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$' }) },
  { $id: 'AdminApiKeyCreateRequest', ...closed },
);
export type ApiKeyCreateRequest = Static<typeof ApiKeyCreateRequestSchema>;

export const CreditRequestSchema = Type.Object(
  {
    amount_dzd: dzdAmountSchema(
      'DZD (a number, or a decimal string), at most 6 decimals. Send an Idempotency-Key: ' +
        'the credit happens once.',
    ),
    reference: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { $id: 'AdminCreditRequest', ...closed },
);
export type CreditRequest = Static<typeof CreditRequestSchema>;

export const ScopedTokenRevokeRequestSchema = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 131_072 }) },
  { $id: 'AdminScopedTokenRevokeRequest', ...closed },
);
export type ScopedTokenRevokeRequest = Static<typeof ScopedTokenRevokeRequestSchema>;

/** `gatewayctl operator-users create`: a dashboard user of the platform team. */
export const OperatorUserCreateRequestSchema = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: DASHBOARD_LIMITS.emailMaxLength }),
    role: StringEnum(OPERATOR_ROLES),
    password: Type.String({
      minLength: DASHBOARD_LIMITS.passwordMinLength,
      maxLength: DASHBOARD_LIMITS.passwordMaxLength,
    }),
  },
  { $id: 'AdminOperatorUserCreateRequest', ...closed },
);
export type OperatorUserCreateRequest = Static<typeof OperatorUserCreateRequestSchema>;

// --- Answers ---------------------------------------------------------------------------------
/*
 * What billing answers on `/internal/v1/admin` and edge passes through on `/admin/v1`; edge's
 * dashboard reads the same answers. This module is read by the browser app too: type-only
 * imports of node-side modules (envelopes, billing-api) are erased from its bundle.
 * Accounts, their detail, credit results and API keys are the dashboard's shapes (one
 * definition, two names): the dashboard shows what the operator API answers.
 */

/** `POST /accounts` (201), `POST /accounts/{id}/suspend|unsuspend`. */
export const OperatorAccountSchema = DashboardAccountSchema;
export type OperatorAccount = DashboardAccount;
/** `GET /accounts/{id}`, `PATCH /accounts/{id}`: the account with its balance. */
export const OperatorAccountDetailSchema = DashboardAccountDetailSchema;
export type OperatorAccountDetail = DashboardAccountDetail;
/** `POST /accounts/{id}/credits`. */
export const CreditResultSchema = DashboardCreditResultSchema;
export type CreditResult = DashboardCreditResult;
/** `POST /accounts/{id}/api-keys` (201) and `.../regenerate`: the raw key, shown once. */
export const IssuedApiKeySchema = DashboardIssuedApiKeySchema;
export type IssuedApiKey = DashboardIssuedApiKey;

/** `GET /accounts?q=&limit=&cursor=`: `next_cursor` null on the last page. */
export const OperatorAccountListSchema = Type.Object(
  {
    accounts: Type.Array(DashboardAccountSchema),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'AdminAccountList' },
);
export type OperatorAccountList = Static<typeof OperatorAccountListSchema>;

/** `GET /accounts/{id}/api-keys`: names and dates, never a key. */
export const ApiKeyListSchema = Type.Object(
  { api_keys: Type.Array(DashboardApiKeySchema) },
  { $id: 'AdminApiKeyList' },
);
export type ApiKeyList = Static<typeof ApiKeyListSchema>;

/** `POST /operator-users` (201): the user created; never the password. */
export const OperatorUserSchema = Type.Object(
  {
    id: Type.String(),
    email: Type.String(),
    role: StringEnum(OPERATOR_ROLES),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'AdminOperatorUser' },
);
export type OperatorUser = Static<typeof OperatorUserSchema>;

/** µDZD as a decimal string (int64 does not fit a JSON number); signed where it says so. */
const MicroDzd = (description: string) =>
  Type.String({ pattern: '^-?(0|[1-9][0-9]*)$', description });
const IsoDate = Type.String({ format: 'date-time' });
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const StatementLineSchema = Type.Object({
  entry_id: Type.String(),
  transaction_id: Type.String(),
  kind: Type.String(),
  reference: Nullable(Type.String()),
  hold_id: Nullable(Type.String()),
  created_at: IsoDate,
  amount_micro_dzd: MicroDzd('Signed: credit positive, debit negative.'),
  balance_after_micro_dzd: MicroDzd('Running balance after this line.'),
});
export type StatementLine = Static<typeof StatementLineSchema>;

/**
 * `GET /accounts/{id}/statement?from=&to=` as JSON (`Accept: text/csv`: the same lines as CSV):
 * `[from, to)`, closing = opening + credits − debits.
 */
export const StatementSchema = Type.Object(
  {
    account_id: Type.String(),
    from: IsoDate,
    to: IsoDate,
    opening_balance_micro_dzd: MicroDzd('Posted balance at `from`.'),
    total_credits_micro_dzd: MicroDzd('Sum of the credits.'),
    total_debits_micro_dzd: MicroDzd('Sum of the debits, a positive number.'),
    closing_balance_micro_dzd: MicroDzd('Posted balance at `to`.'),
    lines: Type.Array(StatementLineSchema),
  },
  { $id: 'AdminStatement' },
);
export type Statement = Static<typeof StatementSchema>;

/** The most open holds `GET /accounts/{id}/holds` lists (oldest first; `has_more` beyond). */
export const OPEN_HOLDS_MAX = 100;

/** Money reserved for one request that is not settled or released yet. */
export const OpenHoldSchema = Type.Object(
  {
    hold_id: Type.String({ description: "The request's job id (its receipt's id)." }),
    model: Type.String(),
    amount_micro_dzd: MicroDzd('Reserved for the worst case of the request.'),
    priority: Type.Boolean(),
    scoped_token_id: Nullable(Type.String()),
    published: Type.Boolean({
      description:
        'Its job reached the queue. One that did not is released after the publish grace.',
    }),
    created_at: IsoDate,
    expires_at: Type.String({
      format: 'date-time',
      description: 'When the sweeper releases it if it is still open.',
    }),
  },
  { $id: 'AdminOpenHold' },
);
export type OpenHold = Static<typeof OpenHoldSchema>;

/**
 * `GET /accounts/{id}/holds`: the account's open holds, oldest first (a stuck one is the oldest),
 * at most `OPEN_HOLDS_MAX`; with every one listed they add up to `reserved_micro_dzd`.
 */
export const OpenHoldListSchema = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(OpenHoldSchema),
    has_more: Type.Boolean(),
    reserved_micro_dzd: MicroDzd("The account's reserved total: all of its open holds."),
  },
  { $id: 'AdminOpenHoldList' },
);
export type OpenHoldList = Static<typeof OpenHoldListSchema>;

/** One ledger entry (double entry: a customer's or a system account's side of a transaction). */
export const LedgerEntrySchema = Type.Object({
  id: Type.String(),
  transaction_id: Type.String(),
  kind: Type.String(),
  ledger_account: Type.String({ description: '`customer:<account id>` or `system:<name>`.' }),
  account_id: Nullable(Type.String()),
  amount_micro_dzd: MicroDzd('Signed: credit positive, debit negative.'),
  amount_dzd: Type.Number(),
  reference: Nullable(Type.String()),
  hold_id: Nullable(Type.String()),
  created_at: IsoDate,
});
export type LedgerEntry = Static<typeof LedgerEntrySchema>;

/** `GET /ledger/entries?account=&from=&to=&limit=&cursor=`, oldest first. */
export const LedgerEntryPageSchema = Type.Object(
  {
    entries: Type.Array(LedgerEntrySchema),
    next_cursor: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'AdminLedgerEntryPage' },
);
export type LedgerEntryPage = Static<typeof LedgerEntryPageSchema>;

/** `GET /ledger/check`: the invariants' report (`ok` false: `violations` say which). */
export const LedgerCheckSchema = Type.Object(
  { ok: Type.Boolean(), violations: Type.Array(Type.String()) },
  { $id: 'AdminLedgerCheck' },
);
export type LedgerCheck = Static<typeof LedgerCheckSchema>;

/** A node of a catalog model (`weight` 1 when omitted). */
export const CatalogNodeSchema = Type.Object({
  url: Type.String(),
  weight: Type.Optional(Type.Number()),
});
export type CatalogNode = Static<typeof CatalogNodeSchema>;

/**
 * A catalog model as the operator API answers it (`GET /models`, `PUT /models/{id}`): prices in
 * DZD per million tokens, the media fields with their defaults applied.
 */
export const CatalogModelSchema = Type.Object(
  {
    id: Type.String(),
    kind: StringEnum(MODEL_KINDS),
    provider: StringEnum(MODEL_PROVIDERS),
    protocol: StringEnum(NODE_PROTOCOLS),
    upstream_model: Type.String(),
    input_price_dzd_per_m: Type.Number(),
    output_price_dzd_per_m: Type.Number(),
    max_output_tokens: Type.Integer(),
    input_modalities: Type.Array(StringEnum(INPUT_MODALITIES)),
    image_tokens: Type.Integer(),
    remote_images: Type.Boolean(),
    nodes: Type.Array(CatalogNodeSchema),
    updated_at: IsoDate,
  },
  { $id: 'AdminCatalogModel' },
);
export type CatalogModel = Static<typeof CatalogModelSchema>;

/** `GET /models`. */
export const CatalogModelListSchema = Type.Object(
  { models: Type.Array(CatalogModelSchema) },
  { $id: 'AdminCatalogModelList' },
);
export type CatalogModelList = Static<typeof CatalogModelListSchema>;

/** One node of the catalog with what was last observed of it. */
export const NodeHealthViewSchema = Type.Object(
  {
    model: Type.String(),
    url: Type.String(),
    /** `unknown` when no report or the last one is older than the staleness bound. */
    health: StringEnum(NODE_HEALTH_STATES),
    observedAt: Type.Union([IsoDate, Type.Null()]),
    lastErrorKind: Type.Union([StringEnum(NODE_HEALTH_ERROR_KINDS), Type.Null()]),
    workerId: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'AdminNodeHealth' },
);
export type NodeHealthView = Static<typeof NodeHealthViewSchema>;

/** `GET /nodes/health`: each catalog node's last observed health. */
export const NodeHealthListSchema = Type.Object(
  { nodes: Type.Array(NodeHealthViewSchema) },
  { $id: 'AdminNodeHealthList' },
);
export type NodeHealthList = Static<typeof NodeHealthListSchema>;

/**
 * `GET /usage/requests` as JSON: the request log of every account (each entry names its
 * account), the shape of an account's own log under a name of the operator API's.
 */
export const OperatorUsageLogPageSchema = Type.Object(UsageLogPageSchema.properties, {
  $id: 'AdminUsageLogPage',
});

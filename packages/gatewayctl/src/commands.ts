import { randomUUID } from 'node:crypto';
import {
  OPERATOR_ROUTES as R,
  type AccountCreateRequest,
  type AccountPatchRequest,
  type ApiKeyCreateRequest,
  type CatalogModel,
  type CatalogModelList,
  type CreditRequest,
  type IssuedApiKey,
  type ModelPutRequest,
  type OperatorAccount,
  type OperatorAccountDetail,
  type ScopedTokenRevokeRequest,
  type WebhookDelivery,
  type WebhookDeliveryPage,
  type WebhookExpirePreviousResult,
  type WebhookSigningSecret,
  type WebhookSigningSecretList,
} from '@gateway/contracts';
import type { AdminClient } from './client.js';
import { EXIT, usageError } from './errors.js';
import { readModelsFile } from './models-file.js';
import { saveText } from './save-text.js';
import { record, show, table, type Output } from './output.js';

export interface CommandContext {
  client: AdminClient;
  out: Output;
  args: string[];
  options: Record<string, string | boolean | undefined>;
  env: NodeJS.ProcessEnv;
}

export interface Command {
  usage: string;
  run(ctx: CommandContext): Promise<number | void>;
}

type Json = Record<string, unknown>;

export function arg(ctx: CommandContext, index: number, name: string): string {
  const value = ctx.args[index];
  if (value === undefined || value === '') throw usageError(`missing <${name}>`);
  return value;
}

export function option(ctx: CommandContext, name: string): string | undefined {
  const value = ctx.options[name];
  return typeof value === 'string' ? value : undefined;
}

/** The usage of a command about an API key's or a scoped token's setting. */
export const KEY_OR_TOKEN_USAGE = '<account> --key NAME | --token TOKEN_ID';

/** Whose setting: an API key's (`--key NAME`) or a scoped token's (`--token TOKEN_ID`). */
export type OwnerParams = { id: string; name: string } | { id: string; tokenId: string };

/** The path parameters of an API key's or a scoped token's setting: exactly one of the flags. */
export function keyOrToken(ctx: CommandContext): OwnerParams {
  const id = arg(ctx, 0, 'account');
  const name = option(ctx, 'key');
  const tokenId = option(ctx, 'token');
  if ((name === undefined) === (tokenId === undefined)) {
    throw usageError('give exactly one of --key NAME or --token TOKEN_ID');
  }
  return name !== undefined ? { id, name } : { id, tokenId: tokenId! };
}

const ACCOUNT_COLUMNS = ['id', 'name', 'status', 'balance_dzd', 'reserved_dzd'];
/** The id is what `--token` takes (budgets, rate limits). */
const TOKEN_COLUMNS = ['id', 'api_key_name', 'state', 'spent_dzd', 'expires_at'];
const SECRET_COLUMNS = ['id', 'secret', 'created_at', 'expires_at'];

/** An answer shown as `key: value` lines: an account, its detail, or an issued API key. */
type Shown = OperatorAccount | OperatorAccountDetail | IssuedApiKey;

function showAccount(ctx: CommandContext, account: Shown): void {
  show(ctx.out, account, () => record(account));
}

/** The path parameters of an account's route: `<account>`, the first argument. */
const account = (ctx: CommandContext) => ({ id: arg(ctx, 0, 'account') });

export const COMMANDS: Record<string, Command> = {
  'accounts create': {
    usage: 'accounts create <name>',
    async run(ctx) {
      const body: AccountCreateRequest = { name: arg(ctx, 0, 'name') };
      showAccount(ctx, await ctx.client.call(R.createAccount, { body }));
    },
  },
  'accounts list': {
    usage: 'accounts list [--limit N] [--cursor C]',
    async run(ctx) {
      const query = new URLSearchParams();
      if (option(ctx, 'limit')) query.set('limit', option(ctx, 'limit')!);
      if (option(ctx, 'cursor')) query.set('cursor', option(ctx, 'cursor')!);
      const page = await ctx.client.call(R.listAccounts, { query });
      show(ctx.out, page, () => {
        const more = page.next_cursor ? `next page: --cursor ${page.next_cursor}\n` : '';
        return table(page.accounts, ACCOUNT_COLUMNS) + more;
      });
    },
  },
  'accounts show': {
    usage: 'accounts show <account>',
    run: async (ctx) =>
      showAccount(ctx, await ctx.client.call(R.getAccount, { params: account(ctx) })),
  },
  'accounts suspend': {
    usage: 'accounts suspend <account>',
    run: async (ctx) =>
      showAccount(ctx, await ctx.client.call(R.suspendAccount, { params: account(ctx) })),
  },
  'accounts unsuspend': {
    usage: 'accounts unsuspend <account>',
    run: async (ctx) =>
      showAccount(ctx, await ctx.client.call(R.unsuspendAccount, { params: account(ctx) })),
  },
  'accounts update': {
    usage: 'accounts update <account> [--rate-limit N] [--webhook-format A|B]',
    async run(ctx) {
      // The flags as the contract names them; the gateway checks the values.
      const body: { [K in keyof AccountPatchRequest]?: unknown } = {};
      const rate = option(ctx, 'rate-limit');
      if (rate !== undefined) {
        if (!/^\d+$/.test(rate)) throw usageError('--rate-limit must be a whole number');
        body.rate_limit_per_minute = Number(rate);
      }
      const format = option(ctx, 'webhook-format');
      if (format !== undefined) body.webhook_format = format;
      if (Object.keys(body).length === 0) throw usageError('nothing to update');
      const params = account(ctx);
      // Sent as given (a --webhook-format other than A or B included): the gateway refuses it.
      const patch = body as AccountPatchRequest;
      showAccount(ctx, await ctx.client.call(R.patchAccount, { params, body: patch }));
    },
  },
  'keys create': {
    usage: 'keys create <account> <name>',
    async run(ctx) {
      const body: ApiKeyCreateRequest = { name: arg(ctx, 1, 'name') };
      const params = account(ctx);
      showAccount(ctx, await ctx.client.call(R.createApiKey, { params, body }));
    },
  },
  'keys regenerate': {
    usage: 'keys regenerate <account> <name>',
    async run(ctx) {
      const params = { ...account(ctx), name: arg(ctx, 1, 'name') };
      showAccount(ctx, await ctx.client.call(R.regenerateApiKey, { params }));
    },
  },
  'keys delete': {
    usage: 'keys delete <account> <name>',
    async run(ctx) {
      const params = { ...account(ctx), name: arg(ctx, 1, 'name') };
      await ctx.client.call(R.deleteApiKey, { params });
      show(ctx.out, { deleted: true }, () => 'deleted\n');
    },
  },
  credit: {
    usage: 'credit <account> <amount_dzd> [--reference TEXT] [--idempotency-key KEY]',
    async run(ctx) {
      const amount = arg(ctx, 1, 'amount_dzd');
      if (!/^\d+(\.\d{1,6})?$/.test(amount)) {
        throw usageError('amount_dzd must be a positive number with at most 6 decimals');
      }
      // At most 6 decimals (checked above): the JSON number's shortest form is exactly this text.
      const key = option(ctx, 'idempotency-key') ?? randomUUID();
      // No reference: the field is left out (the contract has no null for it).
      const reference = option(ctx, 'reference');
      const request: CreditRequest = {
        amount_dzd: Number(amount),
        ...(reference === undefined ? {} : { reference }),
      };
      const answer = await ctx.client.call(R.credit, {
        params: account(ctx),
        body: request,
        headers: { 'Idempotency-Key': key },
      });
      const credited = { ...answer, idempotency_key: key };
      show(ctx.out, credited, () => record(credited));
    },
  },
  'models list': {
    usage: 'models list',
    async run(ctx) {
      const body = await ctx.client.call<typeof R.listModels, CatalogModelList>(R.listModels, {});
      // Modalities as `text,image`; a gateway older than the field answers without it (`-`).
      const models = body.models.map((model: Partial<CatalogModel>) => ({
        ...model,
        input_modalities: model.input_modalities?.join(','),
      }));
      show(ctx.out, body, () =>
        table(models, [
          'id',
          'kind',
          'provider',
          'protocol',
          'input_modalities',
          'input_price_dzd_per_m',
          'output_price_dzd_per_m',
          'max_output_tokens',
        ]),
      );
    },
  },
  'models put': {
    usage: "models put --file models.yaml | models put <model> --json-body '{...}'  (fields below)",
    async run(ctx) {
      const file = option(ctx, 'file');
      const specs = file
        ? await readModelsFile(file)
        : [{ id: arg(ctx, 0, 'model'), body: parseJsonOption(option(ctx, 'json-body')) }];
      const saved: CatalogModel[] = [];
      for (const spec of specs) {
        // Sent as the file or the flag gives it: the gateway checks it against the contract.
        const body = spec.body as ModelPutRequest;
        const params = { model: spec.id };
        saved.push(
          await ctx.client.call<typeof R.putModel, CatalogModel>(R.putModel, { params, body }),
        );
      }
      show(ctx.out, saved, () =>
        table(saved, ['id', 'kind', 'provider', 'upstream_model', 'updated_at']),
      );
    },
  },
  'tokens list': {
    usage: 'tokens list <account> [--limit N] [--cursor ID]',
    async run(ctx) {
      const params = account(ctx);
      const query = new URLSearchParams();
      for (const name of ['limit', 'cursor']) {
        const value = option(ctx, name);
        if (value !== undefined) query.set(name, value);
      }
      const page = await ctx.client.call(R.listScopedTokens, { params, query });
      show(ctx.out, page, () => {
        const more = page.next_cursor ? `next page: --cursor ${page.next_cursor}\n` : '';
        return table(page.data, TOKEN_COLUMNS) + more;
      });
    },
  },
  'tokens revoke': {
    usage: 'tokens revoke <jwt:token>',
    async run(ctx) {
      const request: ScopedTokenRevokeRequest = { token: arg(ctx, 0, 'token') };
      const body = await ctx.client.call(R.revokeScopedToken, { body: request });
      show(ctx.out, body, () => record(body));
    },
  },
  'webhooks secrets': {
    usage: 'webhooks secrets <account>',
    async run(ctx) {
      const body = await ctx.client.call<typeof R.listWebhookSecrets, WebhookSigningSecretList>(
        R.listWebhookSecrets,
        { params: account(ctx) },
      );
      show(ctx.out, body, () => table(body.secrets, SECRET_COLUMNS));
    },
  },
  'webhooks rotate': {
    usage: 'webhooks rotate <account>',
    async run(ctx) {
      const body = await ctx.client.call<typeof R.rotateWebhookSecret, WebhookSigningSecret>(
        R.rotateWebhookSecret,
        { params: account(ctx) },
      );
      show(ctx.out, body, () => record(body));
    },
  },
  'webhooks expire-previous': {
    usage: 'webhooks expire-previous <account>',
    async run(ctx) {
      const answer = await ctx.client.call<
        typeof R.expirePreviousWebhookSecret,
        WebhookExpirePreviousResult
      >(R.expirePreviousWebhookSecret, { params: account(ctx) });
      show(ctx.out, answer, () =>
        table(answer.secrets, SECRET_COLUMNS).concat(`expired: ${answer.expired}\n`),
      );
    },
  },
  'deliveries list': {
    usage: 'deliveries list <account> [--limit N]',
    async run(ctx) {
      const params = account(ctx);
      const limit = option(ctx, 'limit');
      const query = new URLSearchParams(limit ? { limit } : {});
      const body = await ctx.client.call<typeof R.listWebhookDeliveries, WebhookDeliveryPage>(
        R.listWebhookDeliveries,
        { params, query },
      );
      const rows = body.deliveries.map((d) => ({ ...d, attempts: d.attempts.length }));
      show(ctx.out, body, () =>
        table(rows, ['id', 'job_id', 'status', 'attempts', 'next_attempt_at', 'created_at']),
      );
    },
  },
  'deliveries redeliver': {
    usage: 'deliveries redeliver <delivery>',
    async run(ctx) {
      const body = await ctx.client.call<typeof R.redeliverWebhook, WebhookDelivery | undefined>(
        R.redeliverWebhook,
        { params: { id: arg(ctx, 0, 'delivery') } },
      );
      show(ctx.out, body ?? {}, () => record(body ?? { status: 'queued' }));
    },
  },
  'ledger check': {
    usage: 'ledger check',
    async run(ctx) {
      const report = await ctx.client.call(R.ledgerCheck, {});
      // Each violation is a line of text: `<invariant>: <what breaks it>`.
      show(ctx.out, report, () =>
        report.ok
          ? 'ok: every ledger invariant holds\n'
          : report.violations.map((violation) => `${violation}\n`).join(''),
      );
      return report.ok ? EXIT.ok : EXIT.violations;
    },
  },
  statement: {
    usage: 'statement <account> [--from ISO] [--to ISO] [--out FILE.csv]',
    async run(ctx) {
      const query = new URLSearchParams();
      if (option(ctx, 'from')) query.set('from', option(ctx, 'from')!);
      if (option(ctx, 'to')) query.set('to', option(ctx, 'to')!);
      const text = await ctx.client.callText(R.statement, {
        params: account(ctx),
        query,
        headers: { Accept: 'text/csv' },
      });
      await saveText(ctx.out, option(ctx, 'out'), text, 'statement');
    },
  },
};

function parseJsonOption(text: string | undefined): Json {
  if (text === undefined) throw usageError('give --file or --json-body');
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Json;
  } catch {
    // reported below
  }
  throw usageError('--json-body must be a JSON object');
}

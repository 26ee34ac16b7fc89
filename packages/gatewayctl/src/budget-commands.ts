import { BUDGET_PERIODS, OPERATOR_ROUTES as R, type BudgetPutRequest } from '@gateway/contracts';
import { arg, keyOrToken, KEY_OR_TOKEN_USAGE, option, type Command } from './commands.js';
import { usageError } from './errors.js';
import { record, show, table } from './output.js';

const BUDGET_COLUMNS = [
  'applies_to',
  'owner',
  'period',
  'time_zone',
  'limit_dzd',
  'spent_dzd',
  'reserved_dzd',
  'remaining_dzd',
  'resets_at',
];
const OWNER_USAGE = KEY_OR_TOKEN_USAGE;

const isPeriod = (value: string | undefined): value is BudgetPutRequest['period'] =>
  (BUDGET_PERIODS as readonly (string | undefined)[]).includes(value);

/** Budgets per API key and per scoped token: set, read, remove, list. */
export const BUDGET_COMMANDS: Record<string, Command> = {
  'budgets set': {
    usage: `budgets set ${OWNER_USAGE} --limit-dzd N --period day|week|month|total [--time-zone ZONE]`,
    async run(ctx) {
      const params = keyOrToken(ctx);
      const limit = option(ctx, 'limit-dzd');
      if (limit === undefined || !/^\d+(\.\d{1,6})?$/.test(limit)) {
        throw usageError('--limit-dzd must be a positive number with at most 6 decimals');
      }
      const period = option(ctx, 'period');
      if (!isPeriod(period))
        throw usageError(`--period must be one of ${BUDGET_PERIODS.join(', ')}`);
      const zone = option(ctx, 'time-zone');
      // The limit as a decimal string: exact, whatever its digits (the contract takes both).
      const body: BudgetPutRequest = {
        limit_dzd: limit,
        period,
        ...(zone === undefined ? {} : { time_zone: zone }),
      };
      const view =
        'name' in params
          ? await ctx.client.call(R.putKeyBudget, { params, body })
          : await ctx.client.call(R.putTokenBudget, { params, body });
      show(ctx.out, view, () => record(view));
    },
  },
  'budgets get': {
    usage: `budgets get ${OWNER_USAGE}`,
    async run(ctx) {
      const params = keyOrToken(ctx);
      const view =
        'name' in params
          ? await ctx.client.call(R.getKeyBudget, { params })
          : await ctx.client.call(R.getTokenBudget, { params });
      show(ctx.out, view, () => record(view));
    },
  },
  'budgets rm': {
    usage: `budgets rm ${OWNER_USAGE}`,
    async run(ctx) {
      const params = keyOrToken(ctx);
      if ('name' in params) await ctx.client.call(R.removeKeyBudget, { params });
      else await ctx.client.call(R.removeTokenBudget, { params });
      show(ctx.out, { removed: true }, () => 'removed\n');
    },
  },
  'budgets list': {
    usage: 'budgets list <account>',
    async run(ctx) {
      const params = { id: arg(ctx, 0, 'account') };
      const list = await ctx.client.call(R.listBudgets, { params });
      show(ctx.out, list, () => table(list.data, BUDGET_COLUMNS));
    },
  },
};

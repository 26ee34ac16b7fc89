import type { BudgetList, BudgetPutRequest, BudgetView } from '@gateway/contracts';
import { BUDGET_PERIODS } from '@gateway/contracts';
import {
  arg,
  keyOrTokenPath,
  KEY_OR_TOKEN_USAGE,
  option,
  type Command,
  type CommandContext,
} from './commands.js';
import { usageError } from './errors.js';
import { record, show, table } from './output.js';

const seg = (value: string) => encodeURIComponent(value);

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

const budgetPath = (ctx: CommandContext) => keyOrTokenPath(ctx, 'budget');

const isPeriod = (value: string | undefined): value is BudgetPutRequest['period'] =>
  (BUDGET_PERIODS as readonly (string | undefined)[]).includes(value);

/** Budgets per API key and per scoped token: set, read, remove, list. */
export const BUDGET_COMMANDS: Record<string, Command> = {
  'budgets set': {
    usage: `budgets set ${OWNER_USAGE} --limit-dzd N --period day|week|month|total [--time-zone ZONE]`,
    async run(ctx) {
      const path = budgetPath(ctx);
      const limit = option(ctx, 'limit-dzd');
      if (limit === undefined || !/^\d+(\.\d{1,6})?$/.test(limit)) {
        throw usageError('--limit-dzd must be a positive number with at most 6 decimals');
      }
      const period = option(ctx, 'period');
      if (!isPeriod(period))
        throw usageError(`--period must be one of ${BUDGET_PERIODS.join(', ')}`);
      const zone = option(ctx, 'time-zone');
      // The limit as a decimal string: exact, whatever its digits (the contract takes both).
      const request: BudgetPutRequest = {
        limit_dzd: limit,
        period,
        ...(zone === undefined ? {} : { time_zone: zone }),
      };
      const { body } = await ctx.client.request<BudgetView>('PUT', path, { body: request });
      show(ctx.out, body, () => record(body));
    },
  },
  'budgets get': {
    usage: `budgets get ${OWNER_USAGE}`,
    async run(ctx) {
      const { body } = await ctx.client.request<BudgetView>('GET', budgetPath(ctx));
      show(ctx.out, body, () => record(body));
    },
  },
  'budgets rm': {
    usage: `budgets rm ${OWNER_USAGE}`,
    async run(ctx) {
      await ctx.client.request('DELETE', budgetPath(ctx));
      show(ctx.out, { removed: true }, () => 'removed\n');
    },
  },
  'budgets list': {
    usage: 'budgets list <account>',
    async run(ctx) {
      const path = `/accounts/${seg(arg(ctx, 0, 'account'))}/budgets`;
      const { body } = await ctx.client.request<BudgetList>('GET', path);
      show(ctx.out, body, () => table(body.data, BUDGET_COLUMNS));
    },
  },
};

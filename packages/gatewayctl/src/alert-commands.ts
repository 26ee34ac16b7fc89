import {
  MAX_BUDGET_THRESHOLDS,
  MAX_EXHAUSTION_HOURS,
  OPERATOR_ROUTES as R,
  type AlertSettingsPutRequest,
} from '@gateway/contracts';
import { arg, option, type Command, type CommandContext } from './commands.js';
import { usageError } from './errors.js';
import { record, show } from './output.js';

/** The path parameters: `<account>`. */
const account = (ctx: CommandContext) => ({ id: arg(ctx, 0, 'account') });

/** `50,80,100` → [50, 80, 100]; each 1..100, at most 10 (the gateway refuses duplicates). */
function thresholds(text: string): number[] {
  const values = text === '' ? [] : text.split(',').map(Number);
  if (
    values.length > MAX_BUDGET_THRESHOLDS ||
    values.some((v) => !Number.isInteger(v) || v < 1 || v > 100)
  ) {
    throw usageError(
      `--budget-thresholds must list at most ${MAX_BUDGET_THRESHOLDS} integers from 1 to 100`,
    );
  }
  return values;
}

function hours(text: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1 || value > MAX_EXHAUSTION_HOURS) {
    throw usageError(`--exhaustion-hours must be an integer from 1 to ${MAX_EXHAUSTION_HOURS}`);
  }
  return value;
}

/** The PUT body from the flags: an absent flag takes the gateway's default (PUT replaces). */
function settingsFrom(ctx: CommandContext): AlertSettingsPutRequest {
  const url = option(ctx, 'endpoint');
  if (url === undefined) throw usageError('missing --endpoint URL');
  const below = option(ctx, 'balance-below-dzd');
  if (below !== undefined && !/^\d+(\.\d{1,6})?$/.test(below)) {
    throw usageError('--balance-below-dzd must be a positive number with at most 6 decimals');
  }
  const budget = option(ctx, 'budget-thresholds');
  const exhaustion = option(ctx, 'exhaustion-hours');
  return {
    url,
    enabled: ctx.options.disabled !== true,
    // The threshold as a decimal string: exact, whatever its digits (the contract takes both).
    ...(below === undefined ? {} : { balance_below_dzd: below }),
    ...(budget === undefined ? {} : { budget_thresholds_percent: thresholds(budget) }),
    ...(exhaustion === undefined ? {} : { exhaustion_hours: hours(exhaustion) }),
  };
}

/** Account alerts: signed webhooks on balance, budgets and projected exhaustion. */
export const ALERT_COMMANDS: Record<string, Command> = {
  'alerts set': {
    usage:
      'alerts set <account> --endpoint URL [--balance-below-dzd N] ' +
      '[--budget-thresholds 50,80,100] [--exhaustion-hours H] [--disabled]',
    async run(ctx) {
      const request = settingsFrom(ctx);
      const params = account(ctx);
      const body = await ctx.client.call(R.putAlerts, { params, body: request });
      show(ctx.out, body, () => record(body));
    },
  },
  'alerts get': {
    usage: 'alerts get <account>',
    async run(ctx) {
      const body = await ctx.client.call(R.getAlerts, { params: account(ctx) });
      show(ctx.out, body, () => record(body));
    },
  },
  'alerts rm': {
    usage: 'alerts rm <account>',
    async run(ctx) {
      await ctx.client.call(R.removeAlerts, { params: account(ctx) });
      show(ctx.out, { removed: true }, () => 'removed\n');
    },
  },
};

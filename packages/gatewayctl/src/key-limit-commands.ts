import { OPERATOR_ROUTES as R, type KeyRateLimitPutRequest } from '@gateway/contracts';
import {
  arg,
  keyOrToken,
  KEY_OR_TOKEN_USAGE,
  option,
  type Command,
  type CommandContext,
} from './commands.js';
import { usageError } from './errors.js';
import { record, show, table } from './output.js';

const OWNER_USAGE = KEY_OR_TOKEN_USAGE;

const LIST_COLUMNS = ['applies_to', 'owner', 'requests_per_minute', 'tokens_per_minute'];

/** `--rpm N` / `--tpm N`: a positive integer, or `none` to remove that limit. */
function limitOption(ctx: CommandContext, name: string): number | null | undefined {
  const value = option(ctx, name);
  if (value === undefined || value === 'none') return value === 'none' ? null : undefined;
  if (!/^[1-9]\d{0,10}$/.test(value)) {
    throw usageError(`--${name} must be a positive integer or none`);
  }
  return Number(value);
}

/** Per-key rate limits: set, read, remove, list. */
export const KEY_LIMIT_COMMANDS: Record<string, Command> = {
  'rate-limits set': {
    usage: `rate-limits set ${OWNER_USAGE} [--rpm N|none] [--tpm N|none]`,
    async run(ctx) {
      const params = keyOrToken(ctx);
      const rpm = limitOption(ctx, 'rpm');
      const tpm = limitOption(ctx, 'tpm');
      if (rpm === undefined && tpm === undefined) throw usageError('give --rpm or --tpm');
      // A PUT replaces both: one left out is removed, as the operator API says.
      const body: KeyRateLimitPutRequest = {
        ...(rpm === undefined ? {} : { requests_per_minute: rpm }),
        ...(tpm === undefined ? {} : { tokens_per_minute: tpm }),
      };
      const view =
        'name' in params
          ? await ctx.client.call(R.putKeyRateLimit, { params, body })
          : await ctx.client.call(R.putTokenRateLimit, { params, body });
      show(ctx.out, view, () => record(view));
    },
  },
  'rate-limits get': {
    usage: `rate-limits get ${OWNER_USAGE}`,
    async run(ctx) {
      const params = keyOrToken(ctx);
      const view =
        'name' in params
          ? await ctx.client.call(R.getKeyRateLimit, { params })
          : await ctx.client.call(R.getTokenRateLimit, { params });
      show(ctx.out, view, () => record(view));
    },
  },
  'rate-limits rm': {
    usage: `rate-limits rm ${OWNER_USAGE}`,
    async run(ctx) {
      const params = keyOrToken(ctx);
      if ('name' in params) await ctx.client.call(R.removeKeyRateLimit, { params });
      else await ctx.client.call(R.removeTokenRateLimit, { params });
      show(ctx.out, { removed: true }, () => 'removed\n');
    },
  },
  'rate-limits list': {
    usage: 'rate-limits list <account>',
    async run(ctx) {
      const params = { id: arg(ctx, 0, 'account') };
      const list = await ctx.client.call(R.listKeyRateLimits, { params });
      show(ctx.out, list, () => table(list.data, LIST_COLUMNS));
    },
  },
};

import {
  OPERATOR_ROUTES as R,
  microDzdFromWire,
  microDzdToDecimalString,
} from '@gateway/contracts';
import { arg, type Command } from './commands.js';
import { record, show, table } from './output.js';

/** Nested parts as dotted keys (`tokens.prompt`, `ledger.refund_transaction_id`): one line each. */
function flat(value: object, prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const name = `${prefix}${key}`;
    if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) {
      Object.assign(out, flat(inner, `${name}.`));
    } else {
      out[name] = Array.isArray(inner) ? inner.join(',') : inner;
    }
  }
  return out;
}

/** µDZD digit strings as DZD with up to 6 decimals, exactly (no float on the way). */
const dzd = (microDzd: string) => microDzdToDecimalString(microDzdFromWire(microDzd));

/** Receipts: one request traced to its money; an account's money still reserved. */
export const RECEIPT_COMMANDS: Record<string, Command> = {
  holds: {
    usage: 'holds <account>',
    async run(ctx) {
      const body = await ctx.client.call(R.openHolds, { params: { id: arg(ctx, 0, 'account') } });
      const rows = body.data.map((hold) => ({ ...hold, amount_dzd: dzd(hold.amount_micro_dzd) }));
      const columns = ['hold_id', 'model', 'amount_dzd', 'published', 'created_at', 'expires_at'];
      show(ctx.out, body, () => {
        const more = body.has_more ? 'more open holds than shown (the oldest are)\n' : '';
        return `${table(rows, columns)}${more}reserved_dzd: ${dzd(body.reserved_micro_dzd)}\n`;
      });
    },
  },
  receipt: {
    usage: 'receipt <account> <request_id | job_id>',
    async run(ctx) {
      const params = { id: arg(ctx, 0, 'account'), requestId: arg(ctx, 1, 'request_id') };
      const body = await ctx.client.call(R.receipt, { params });
      show(ctx.out, body, () => record(flat(body)));
    },
  },
};

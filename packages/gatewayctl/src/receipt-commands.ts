import { OPERATOR_ROUTES as R } from '@gateway/contracts';
import { arg, type Command } from './commands.js';
import { record, show } from './output.js';

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

/** Receipts: one request traced to its money. */
export const RECEIPT_COMMANDS: Record<string, Command> = {
  receipt: {
    usage: 'receipt <account> <request_id | job_id>',
    async run(ctx) {
      const params = { id: arg(ctx, 0, 'account'), requestId: arg(ctx, 1, 'request_id') };
      const body = await ctx.client.call(R.receipt, { params });
      show(ctx.out, body, () => record(flat(body)));
    },
  },
};

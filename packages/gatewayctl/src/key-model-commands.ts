import {
  OPERATOR_ROUTES as R,
  type ApiKeyModelsPutRequest,
  type ApiKeyModelsView,
} from '@gateway/contracts';
import { arg, type Command, type CommandContext } from './commands.js';
import { usageError } from './errors.js';
import { record, show } from './output.js';

/** The path parameters: `<account> <key>`. */
const keyParams = (ctx: CommandContext) => ({
  id: arg(ctx, 0, 'account'),
  name: arg(ctx, 1, 'key'),
});

const shown = (view: ApiKeyModelsView) =>
  record({ api_key: view.api_key, models: view.models.length ? view.models.join(' ') : '(any)' });

/** An API key's list of models, which also bounds the scoped tokens it signs: set and read. */
export const KEY_MODEL_COMMANDS: Record<string, Command> = {
  'key-models set': {
    usage: 'key-models set <account> <key> <model>... | key-models set <account> <key> --any',
    async run(ctx) {
      const models = ctx.args.slice(2);
      const any = ctx.options.any === true;
      if (any === models.length > 0) throw usageError('give the models, or --any (no list)');
      const request: ApiKeyModelsPutRequest = { models };
      const params = keyParams(ctx);
      const body = await ctx.client.call(R.putKeyModels, { params, body: request });
      show(ctx.out, body, () => shown(body));
    },
  },
  'key-models get': {
    usage: 'key-models get <account> <key>',
    async run(ctx) {
      const body = await ctx.client.call(R.getKeyModels, { params: keyParams(ctx) });
      show(ctx.out, body, () => shown(body));
    },
  },
};

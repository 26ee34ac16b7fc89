import { parseArgs } from 'node:util';
import { AdminClient } from './client.js';
import { BUDGET_COMMANDS } from './budget-commands.js';
import { ALERT_COMMANDS } from './alert-commands.js';
import { KEY_LIMIT_COMMANDS } from './key-limit-commands.js';
import { KEY_MODEL_COMMANDS } from './key-model-commands.js';
import { COMMANDS as ACCOUNT_COMMANDS } from './commands.js';
import { DASHBOARD_COMMANDS } from './dashboard-commands.js';
import { RECEIPT_COMMANDS } from './receipt-commands.js';
import { PERIOD_COMMANDS, REPORT_COMMANDS } from './report-commands.js';
import { CliError, EXIT, usageError } from './errors.js';

export { EXIT } from './errors.js';

const COMMANDS = {
  ...ACCOUNT_COMMANDS,
  ...DASHBOARD_COMMANDS,
  ...BUDGET_COMMANDS,
  ...KEY_LIMIT_COMMANDS,
  ...KEY_MODEL_COMMANDS,
  ...RECEIPT_COMMANDS,
  ...REPORT_COMMANDS,
  ...PERIOD_COMMANDS,
  ...ALERT_COMMANDS,
};

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout(text: string): void;
  stderr(text: string): void;
}

const OPTIONS = {
  url: { type: 'string' },
  'admin-token': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  limit: { type: 'string' },
  cursor: { type: 'string' },
  'rate-limit': { type: 'string' },
  'webhook-format': { type: 'string' },
  reference: { type: 'string' },
  'idempotency-key': { type: 'string' },
  file: { type: 'string' },
  'json-body': { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  out: { type: 'string' },
  'timeout-ms': { type: 'string' },
  role: { type: 'string' },
  'password-env': { type: 'string' },
  key: { type: 'string' },
  token: { type: 'string' },
  'limit-dzd': { type: 'string' },
  period: { type: 'string' },
  'time-zone': { type: 'string' },
  rpm: { type: 'string' },
  tpm: { type: 'string' },
  endpoint: { type: 'string' },
  'balance-below-dzd': { type: 'string' },
  'budget-thresholds': { type: 'string' },
  'exhaustion-hours': { type: 'string' },
  disabled: { type: 'boolean' },
  any: { type: 'boolean' },
  csv: { type: 'string' },
  by: { type: 'string' },
} as const;

export function helpText(): string {
  const lines = Object.values(COMMANDS).map((command) => `  gatewayctl ${command.usage}`);
  return [
    'gatewayctl: the gateway operator API from the command line',
    '',
    'Commands:',
    ...lines,
    '',
    'Model fields (models put: PUT replaces the model, an omitted optional field takes its default):',
    '  kind, provider, [protocol], upstream_model, input_price_dzd_per_m, output_price_dzd_per_m,',
    '  max_output_tokens, [nodes: [{url, weight}]],',
    '  [input_modalities]: list of text, image, audio, file; must include text (default [text])',
    '  [image_tokens]: token ceiling the hold counts per image part, 1-100000 (default 1445)',
    '  [remote_images]: image parts may be http(s) URLs, forwarded as sent (default false: data: only)',
    '  e.g. models.yaml: {id: acme/vision, ..., input_modalities: [text, image], image_tokens: 1445}',
    '',
    'Options: --url URL (GATEWAY_URL, default http://127.0.0.1:8080)',
    '         --admin-token TOKEN (GATEWAY_ADMIN_TOKEN)   --json   --timeout-ms N',
    'Exit codes: 0 ok, 1 refused by the gateway, 2 usage, 3 gateway unreachable or failing,',
    '            4 admin token refused, 5 ledger invariant violations',
    '',
  ].join('\n');
}

/** Runs one command line; returns the exit code (never throws, never exits). */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    });
    if (values.help || positionals.length === 0) {
      io.stdout(helpText());
      return positionals.length === 0 && !values.help ? EXIT.usage : EXIT.ok;
    }
    const twoWords = `${positionals[0]} ${positionals[1] ?? ''}`;
    const [name, args] = COMMANDS[twoWords]
      ? [twoWords, positionals.slice(2)]
      : [positionals[0]!, positionals.slice(1)];
    const command = COMMANDS[name];
    if (!command)
      throw usageError(`unknown command "${positionals.join(' ')}" (see gatewayctl --help)`);
    const adminToken = values['admin-token'] ?? io.env.GATEWAY_ADMIN_TOKEN;
    if (!adminToken)
      throw usageError('no admin token: pass --admin-token or set GATEWAY_ADMIN_TOKEN');
    const timeoutMs = Number(values['timeout-ms'] ?? 30_000);
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
      throw usageError('--timeout-ms must be a positive integer');
    const client = new AdminClient({
      baseUrl: values.url ?? io.env.GATEWAY_URL ?? 'http://127.0.0.1:8080',
      adminToken,
      timeoutMs,
    });
    const out = { json: values.json === true, write: io.stdout };
    const code = await command.run({ client, out, args, options: values, env: io.env });
    return typeof code === 'number' ? code : EXIT.ok;
  } catch (error) {
    if (error instanceof CliError) {
      io.stderr(`gatewayctl: ${error.message}\n`);
      return error.exitCode;
    }
    const code = (error as { code?: string }).code;
    if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS')) {
      io.stderr(`gatewayctl: ${(error as Error).message}\n`);
      return EXIT.usage;
    }
    io.stderr(`gatewayctl: unexpected error: ${(error as Error).message}\n`);
    return EXIT.unavailable;
  }
}

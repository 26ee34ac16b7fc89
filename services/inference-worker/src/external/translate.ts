import { GatewayError } from '@gateway/contracts';

/*
 * The external provider's strict allowlist (spec: "Models of an external provider"). Every
 * parameter of a chat request is supported, translated or ignored; ignored ones are dropped
 * with a warning that names the parameter and never its value.
 */

/** Sent upstream unchanged. */
const PASSED_THROUGH = new Set([
  'messages',
  'max_completion_tokens',
  'frequency_penalty',
  'presence_penalty',
  'n',
  'seed',
  'user',
  'logprobs',
  'response_format',
  'tools',
]);

/** Handled by the gateway itself for every model: neither sent upstream nor warned about. */
const GATEWAY_PARAMETERS = new Set(['model', 'stream', 'service_tier', 'webhook']);

export const REASONING_EFFORTS = ['none', 'low', 'medium', 'high', 'xhigh'] as const;

export interface TranslateOptions {
  upstreamModel: string;
  /** The catalog's output cap: `max_completion_tokens` never exceeds it. */
  maxOutputTokens: number;
}

export interface TranslatedRequest {
  body: Record<string, unknown>;
  /** Sorted, one per dropped parameter; empty when nothing was dropped. */
  warnings: string[];
}

export const droppedWarning = (name: string): string =>
  `Parameter '${name}' is not supported by this model and was ignored.`;

export function translateForExternalProvider(
  request: Readonly<Record<string, unknown>>,
  options: TranslateOptions,
): TranslatedRequest {
  const body: Record<string, unknown> = { model: options.upstreamModel };
  const dropped = new Set<string>();
  for (const [name, value] of Object.entries(request)) {
    if (value === undefined || GATEWAY_PARAMETERS.has(name)) continue;
    if (PASSED_THROUGH.has(name)) body[name] = value;
    else if (!translateOne(name, value, request, body)) dropped.add(name);
  }
  if (request.stream === true) {
    body.stream = true;
    // The final chunk must carry real counts: the gateway bills from them.
    body.stream_options = { include_usage: true };
  }
  const requested = body.max_completion_tokens;
  body.max_completion_tokens =
    typeof requested === 'number'
      ? Math.min(requested, options.maxOutputTokens)
      : options.maxOutputTokens;
  return { body, warnings: [...dropped].sort().map(droppedWarning) };
}

/** Parameters with a rule of their own; false means "drop with a warning". */
function translateOne(
  name: string,
  value: unknown,
  request: Readonly<Record<string, unknown>>,
  body: Record<string, unknown>,
): boolean {
  switch (name) {
    case 'max_tokens':
      // Both sent: max_completion_tokens wins and max_tokens is ignored with a warning.
      if (request.max_completion_tokens !== undefined) return false;
      body.max_completion_tokens = value;
      return true;
    case 'reasoning_effort':
      if (!(REASONING_EFFORTS as readonly unknown[]).includes(value)) {
        throw new GatewayError(
          'invalid_request_body',
          `reasoning_effort must be one of ${REASONING_EFFORTS.join(', ')} for this model.`,
          { param: 'reasoning_effort' },
        );
      }
      body.reasoning_effort = value;
      return true;
    case 'temperature':
      if (value !== 1) return false;
      body.temperature = 1;
      return true;
    case 'parallel_tool_calls':
      if (!Array.isArray(request.tools) || request.tools.length === 0) return false;
      body.parallel_tool_calls = value;
      return true;
    default:
      // top_p, stop, usage, tool_choice and anything else the table does not list.
      return false;
  }
}

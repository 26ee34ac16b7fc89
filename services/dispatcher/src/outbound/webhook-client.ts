import http from 'node:http';
import https from 'node:https';
import { createSecureContext, rootCertificates } from 'node:tls';
import { parseRetryAfterMs, type AttemptResult } from '../deliveries/schedule.js';
import { bareHostname, urlRefusal, type DestinationPolicy } from '@gateway/runtime';
import {
  DESTINATION_REFUSED,
  GuardedHttpAgent,
  GuardedHttpsAgent,
  systemLookup,
  type Lookup,
} from './guarded-agent.js';

export interface WebhookClientOptions {
  /** Whole attempt: connect, TLS, response headers and the (bounded) body read. */
  timeoutMs: number;
  /** Response bytes read at most; the rest is never downloaded. */
  maxResponseBodyBytes: number;
  policy: DestinationPolicy;
  /** Extra trusted CA certificates (PEM), added to Node's bundled roots. */
  extraCaPem?: string;
  /** Injected in tests (no /etc/hosts edits); the system resolver otherwise. */
  lookup?: Lookup;
}

export interface WebhookClient {
  /** Never throws: every way an attempt can end is an AttemptResult. */
  post(url: string, headers: Record<string, string>, body: Buffer): Promise<AttemptResult>;
  close(): void;
}

const RETRY_AFTER_STATUSES = new Set([429, 503]);

/**
 * Kept-alive connections to webhook receivers. A new TLS connection per attempt cost the
 * dispatcher ~7 ms of CPU per delivery (handshake and socket setup were half its profile) and
 * capped deliveries near 450/s on two cores. Reuse keeps the SSRF guarantee: the only way to a
 * new address is a new connection, and every new connection is checked at connect time; a
 * pooled socket stays connected to the address that was checked.
 */
const AGENT_OPTIONS = {
  keepAlive: true,
  // An idle pooled socket is closed after this (or the receiver's shorter Keep-Alive hint).
  timeout: 5_000,
  // Idle sockets kept per receiver; in-flight ones are bounded by the dispatch concurrency.
  maxFreeSockets: 16,
  scheduling: 'lifo',
} satisfies http.AgentOptions;

export function createWebhookClient(options: WebhookClientOptions): WebhookClient {
  const guard = { policy: options.policy, lookup: options.lookup ?? systemLookup };
  // Extra trusted CAs are parsed once into one TLS context: passing `ca` to the agent would
  // parse Node's ~150 roots again for every new connection.
  const secureContext = options.extraCaPem
    ? createSecureContext({ ca: [...rootCertificates, options.extraCaPem] })
    : undefined;
  const httpsAgent = new GuardedHttpsAgent(guard, {
    ...AGENT_OPTIONS,
    ...(secureContext ? { secureContext } : {}),
  });
  const httpAgent = new GuardedHttpAgent(guard, AGENT_OPTIONS);
  return {
    post: (url, headers, body) =>
      postOnce({ url, headers, body, options, agents: { httpsAgent, httpAgent } }),
    close: () => {
      httpsAgent.destroy();
      httpAgent.destroy();
    },
  };
}

interface PostInput {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  options: WebhookClientOptions;
  agents: { httpsAgent: https.Agent; httpAgent: http.Agent };
}

const refused = (detail: string, latencyMs = 0): AttemptResult => ({
  statusCode: null,
  latencyMs,
  failure: 'refused',
  retryAfterMs: null,
  detail: `destination refused: ${detail}`,
});

function parseUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

function requestOptions(url: URL, input: PostInput): https.RequestOptions {
  const secure = url.protocol === 'https:';
  return {
    method: 'POST',
    protocol: url.protocol,
    hostname: bareHostname(url),
    port: url.port || (secure ? 443 : 80),
    path: `${url.pathname}${url.search}`,
    headers: { ...input.headers, 'Content-Length': String(input.body.length) },
    agent: secure ? input.agents.httpsAgent : input.agents.httpAgent,
    ...(url.username
      ? { auth: `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}` }
      : {}),
  };
}

function postOnce(input: PostInput): Promise<AttemptResult> {
  const url = parseUrl(input.url);
  if (!url) return Promise.resolve(refused('the webhook URL is not a valid URL'));
  const reason = urlRefusal(url, input.options.policy);
  if (reason) return Promise.resolve(refused(reason));
  return send(url, input, performance.now(), true);
}

/**
 * A pooled socket the receiver closed while it was idle fails the request before any answer.
 * That is not the receiver refusing the delivery: the attempt is sent once more, at once, on
 * the next socket (Node's documented `reusedSocket` pattern). Receivers dedupe by delivery id.
 */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

function send(
  url: URL,
  input: PostInput,
  startedMs: number,
  resendIfStale: boolean,
): Promise<AttemptResult> {
  const { maxResponseBodyBytes } = input.options;
  const timeoutMs = Math.max(1, input.options.timeoutMs - (performance.now() - startedMs));
  return new Promise((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    let retryAfterMs: number | null = null;
    /** `keepSocket`: the answer was read to its end, so the socket can serve the next attempt. */
    const finish = (
      failure: AttemptResult['failure'],
      detail: string | null,
      keepSocket = false,
    ) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!keepSocket) request.destroy();
      const latencyMs = Math.round(performance.now() - startedMs);
      resolve({ statusCode, latencyMs, failure, retryAfterMs, detail });
    };
    const lib = url.protocol === 'https:' ? https : http;
    let request: http.ClientRequest;
    try {
      request = lib.request(requestOptions(url, input), onResponse);
    } catch (error) {
      // e.g. a header Node refuses; nothing was sent, and sending again would fail the same way.
      const detail = `request not sent: ${(error as Error).message}`;
      resolve({ statusCode: null, latencyMs: 0, failure: 'refused', retryAfterMs: null, detail });
      return;
    }
    function onResponse(response: http.IncomingMessage): void {
      statusCode = response.statusCode ?? null;
      if (statusCode !== null && RETRY_AFTER_STATUSES.has(statusCode)) {
        retryAfterMs = parseRetryAfterMs(response.headers['retry-after'], Date.now());
      }
      // The status decides; the body is only drained a little so the server can finish.
      let receivedBytes = 0;
      response.on('data', (chunk: Buffer) => {
        receivedBytes += chunk.length;
        if (receivedBytes >= maxResponseBodyBytes) finish(null, null);
      });
      response.once('end', () => finish(null, null, true));
      response.once('error', () => finish(null, null));
    }
    const timer = setTimeout(() => {
      // Headers already in: the receiver answered, only its body is slow.
      if (statusCode !== null) finish(null, null);
      else finish('timeout', `timeout after ${input.options.timeoutMs} ms`);
    }, timeoutMs);
    request.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === DESTINATION_REFUSED) return finish('refused', error.message);
      if (statusCode !== null) return finish(null, null);
      if (resendIfStale && request.reusedSocket && STALE_SOCKET_CODES.has(error.code ?? '')) {
        settled = true;
        clearTimeout(timer);
        return resolve(send(url, input, startedMs, false));
      }
      finish('network', `network error: ${error.code ?? error.message}`);
    });
    request.end(input.body);
  });
}

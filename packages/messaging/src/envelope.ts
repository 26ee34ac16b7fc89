import { BusError } from './bus.js';
import type { Destination, PublishOptions } from './bus.js';

/**
 * Message rules shared by both buses, so that what one accepts the other accepts too.
 */

/** A 4 MiB JSON body leaves room for long prompts; larger payloads belong in storage. */
export const DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
export const MAX_HEADERS = 32;
const MAX_HEADER_NAME_BYTES = 128;
const MAX_HEADER_VALUE_BYTES = 4096;
// AMQP short strings (message id, correlation id, reply-to) are at most 255 bytes.
const MAX_PROPERTY_BYTES = 255;
const MAX_EXPIRATION_MS = 7 * 24 * 60 * 60 * 1000;

/** Header names with this prefix belong to the broker and the bus, never to applications. */
const RESERVED_HEADER_PREFIX = 'x-';
/** How many times a message went through its queue's delayed-retry queue. */
export const RETRIES_HEADER = 'x-retries';

export type HeaderValue = string | number | boolean;

/** A validated message, ready for either transport. */
export interface Envelope {
  content: Buffer;
  messageId?: string;
  correlationId?: string;
  replyTo?: string;
  headers: Record<string, HeaderValue>;
  expirationMs?: number;
}

export function encodeEnvelope(
  body: unknown,
  options: PublishOptions,
  maxMessageBytes: number,
): Envelope {
  const envelope: Envelope = {
    content: encodeBody(body, maxMessageBytes),
    headers: checkHeaders(options.headers ?? {}),
  };
  for (const key of ['messageId', 'correlationId', 'replyTo'] as const) {
    const value = options[key];
    if (value === undefined) continue;
    if (typeof value !== 'string' || Buffer.byteLength(value) > MAX_PROPERTY_BYTES) {
      invalid(`${key} must be a string of at most ${MAX_PROPERTY_BYTES} bytes`);
    }
    envelope[key] = value;
  }
  if (options.expirationMs !== undefined) {
    const ms = options.expirationMs;
    if (!Number.isInteger(ms) || ms < 1 || ms > MAX_EXPIRATION_MS) {
      invalid(`expirationMs must be an integer in 1..${MAX_EXPIRATION_MS}`);
    }
    envelope.expirationMs = ms;
  }
  return envelope;
}

function encodeBody(body: unknown, maxMessageBytes: number): Buffer {
  let json: string | undefined;
  try {
    json = JSON.stringify(body);
  } catch (error) {
    invalid(`body is not JSON-serialisable: ${(error as Error).message}`);
  }
  if (json === undefined) invalid('body is not JSON-serialisable');
  const content = Buffer.from(json);
  if (content.length > maxMessageBytes) {
    invalid(`body is ${content.length} bytes, over the ${maxMessageBytes}-byte limit`);
  }
  return content;
}

function checkHeaders(headers: Record<string, unknown>): Record<string, HeaderValue> {
  if (typeof headers !== 'object' || headers === null) invalid('headers must be an object');
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) invalid(`at most ${MAX_HEADERS} headers`);
  for (const [name, value] of entries) {
    if (name.length === 0 || Buffer.byteLength(name) > MAX_HEADER_NAME_BYTES) {
      invalid(`header name '${name}' must be 1..${MAX_HEADER_NAME_BYTES} bytes`);
    }
    if (name.toLowerCase().startsWith(RESERVED_HEADER_PREFIX)) {
      invalid(`header '${name}': names starting with '${RESERVED_HEADER_PREFIX}' are reserved`);
    }
    const ok =
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value)) ||
      (typeof value === 'string' && Buffer.byteLength(value) <= MAX_HEADER_VALUE_BYTES);
    if (!ok) invalid(`header '${name}' must be a boolean, finite number or short string`);
  }
  return { ...(headers as Record<string, HeaderValue>) };
}

export const MAX_PREFETCH = 1000;

export function checkPrefetch(prefetch: number): void {
  if (!Number.isInteger(prefetch) || prefetch < 1 || prefetch > MAX_PREFETCH) {
    invalid(`prefetch must be an integer in 1..${MAX_PREFETCH}`);
  }
}

/** Only the default exchange ('') and declared exchanges may be published to. */
export function checkDestination(
  to: Destination,
  knownExchanges: readonly string[],
): {
  exchange: string;
  routingKey: string;
} {
  if ('queue' in to) {
    const ok = typeof to.queue === 'string' && to.queue.length > 0;
    if (!ok || Buffer.byteLength(to.queue) > 255) invalid('queue name must be 1..255 bytes');
    return { exchange: '', routingKey: to.queue };
  }
  if (!knownExchanges.includes(to.exchange)) {
    invalid(`exchange '${to.exchange}' is not in the topology`);
  }
  if (typeof to.routingKey !== 'string' || Buffer.byteLength(to.routingKey) > 255) {
    invalid('routing key must be a string of at most 255 bytes');
  }
  return { exchange: to.exchange, routingKey: to.routingKey };
}

/** Splits stored headers into what the application sees and the bus's retry counter. */
export function readHeaders(raw: Record<string, unknown> | undefined): {
  headers: Record<string, unknown>;
  retries: number;
} {
  const headers: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw ?? {})) {
    if (!name.toLowerCase().startsWith(RESERVED_HEADER_PREFIX)) headers[name] = value;
  }
  const retries = Number(raw?.[RETRIES_HEADER] ?? 0);
  return { headers, retries: Number.isInteger(retries) && retries > 0 ? retries : 0 };
}

/**
 * The copy a `retry` outcome parks in the delayed-retry queue: same body, ids and application
 * headers, one more retry, no expiration (RabbitMQ drops it when dead-lettering anyway).
 */
export function retryCopy(
  source: Omit<Envelope, 'headers' | 'expirationMs'> & { headers?: Record<string, unknown> },
  retries: number,
): Envelope {
  const { headers } = readHeaders(source.headers);
  return {
    content: source.content,
    messageId: source.messageId,
    correlationId: source.correlationId,
    replyTo: source.replyTo,
    headers: { ...(headers as Record<string, HeaderValue>), [RETRIES_HEADER]: retries },
  };
}

function invalid(message: string): never {
  throw new BusError('invalid-argument', message);
}

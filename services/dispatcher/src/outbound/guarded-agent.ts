import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { Socket, isIP } from 'node:net';
import type { Duplex } from 'node:stream';
import { addressRefusal, type DestinationPolicy } from '@gateway/runtime';

/** `dns.lookup`'s callback shape with `all: true`; tests inject their own resolver. */
export type Lookup = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export const systemLookup: Lookup = (hostname, options, callback) =>
  dnsLookup(hostname, options, callback);

/** Error code of a connection refused by the destination policy (not a network failure). */
export const DESTINATION_REFUSED = 'ERR_WEBHOOK_DESTINATION_REFUSED';

export const refusalError = (message: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`destination refused: ${message}`), { code: DESTINATION_REFUSED });

type NodeLookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * The lookup the socket itself uses, so the address checked is the address connected to: a
 * hostname that resolves to a public address when checked and to 127.0.0.1 a moment later
 * (DNS rebinding) is refused, because there is no "later". If any resolved address is refused,
 * the whole host is.
 */
function guardedLookup(lookup: Lookup, policy: DestinationPolicy) {
  return (hostname: string, options: LookupOptions, callback: NodeLookupCallback): void => {
    lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      if (addresses.length === 0) return callback(refusalError(`${hostname} has no address`), []);
      for (const { address } of addresses) {
        const reason = addressRefusal(address, policy);
        if (reason) return callback(refusalError(`${hostname} resolves to ${reason}`), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** IP-literal hosts skip the lookup entirely, so they are checked here. */
function literalRefusal(host: string | null | undefined, policy: DestinationPolicy) {
  if (!host || isIP(host) === 0) return null;
  const reason = addressRefusal(host, policy);
  return reason ? refusalError(reason) : null;
}

function refusedSocket(error: Error): Duplex {
  const socket = new Socket();
  process.nextTick(() => socket.destroy(error));
  return socket;
}

export interface GuardOptions {
  policy: DestinationPolicy;
  lookup: Lookup;
}

/** HTTPS agent that connects only to addresses the policy allows, checked at connect time. */
export class GuardedHttpsAgent extends https.Agent {
  readonly #guard: GuardOptions;

  constructor(guard: GuardOptions, options: https.AgentOptions) {
    super(options);
    this.#guard = guard;
  }

  override createConnection(
    options: https.RequestOptions,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const refused = literalRefusal(options.host, this.#guard.policy);
    if (refused) return refusedSocket(refused);
    const lookup = guardedLookup(this.#guard.lookup, this.#guard.policy);
    return super.createConnection({ ...options, lookup } as https.RequestOptions, callback);
  }
}

/** Plain-HTTP twin, used only when the development setting allows `http://`. */
export class GuardedHttpAgent extends http.Agent {
  readonly #guard: GuardOptions;

  constructor(guard: GuardOptions, options: http.AgentOptions) {
    super(options);
    this.#guard = guard;
  }

  override createConnection(
    options: http.ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const refused = literalRefusal(options.host, this.#guard.policy);
    if (refused) return refusedSocket(refused);
    const lookup = guardedLookup(this.#guard.lookup, this.#guard.policy);
    return super.createConnection({ ...options, lookup } as http.ClientRequestArgs, callback);
  }
}

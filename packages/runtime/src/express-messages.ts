/*
 * Express gives every request and response its app's prototypes (`app.request`,
 * `app.response`) with `Object.setPrototypeOf` as it takes them (`app.handle`). V8 does not take
 * a changed prototype well: in a plain Node server that only set the prototypes of its request
 * and response, each young-generation collection promoted about 1 MB instead of 5 KB, and an
 * Express app under the same load (10 connections, a 5 ms answer) promoted 2.2 MB a collection,
 * its pauses 6 to 8 ms instead of about 1 (docs/benchmarks.md, "Express's prototypes"). Node's
 * server can create its messages from constructors of our choosing (`createServer`'s
 * `IncomingMessage` and `ServerResponse` options): built with the app's prototypes from the
 * start, Express's own call finds the prototype already set and changes nothing. The same fix
 * is proposed to Express itself (expressjs/express#5998).
 */
import { IncomingMessage, ServerResponse } from 'node:http';

/** The prototypes an Express app gives its messages (an Express app has both). */
export interface MessagePrototypes {
  readonly request: object;
  readonly response: object;
}

type Constructor = abstract new (...args: never[]) => object;

/**
 * A constructor that runs `base`'s and makes its instance with `prototype` from the start.
 * `Reflect.construct` with this function as the new target takes the prototype from it, whether
 * `base` is a class or (as in Node 20) a plain function.
 */
function constructingWith<T extends Constructor>(base: T, prototype: object): T {
  const construct = function (...args: unknown[]): object {
    return Reflect.construct(base, args, construct) as object;
  };
  construct.prototype = prototype;
  return construct as unknown as T;
}

/** An Express app: its `request` and `response` are prototypes over Node's messages. */
export function isExpressApp(listener: unknown): listener is MessagePrototypes {
  const { request, response } = (listener ?? {}) as Partial<MessagePrototypes>;
  return request instanceof IncomingMessage && response instanceof ServerResponse;
}

/** `createServer`'s options that make its messages with `app`'s prototypes. */
export function messageClassesFor(app: MessagePrototypes): {
  IncomingMessage: typeof IncomingMessage;
  ServerResponse: typeof ServerResponse;
} {
  return {
    IncomingMessage: constructingWith(IncomingMessage, app.request),
    ServerResponse: constructingWith(ServerResponse, app.response),
  };
}

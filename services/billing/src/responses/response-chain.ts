/**
 * The `previous_response_id` chain as the repository walked it (newest first): whether a
 * request may continue it, and the conversation it makes. Pure, so every refusal is tested
 * without a database.
 */
import type { ResponseItemRecord } from '@gateway/contracts';
import { invalidResponseBody, responseNotFound } from './response-errors.js';
import { itemsOf } from './response-items.js';
import type { ResponseContent } from './response-sealing.js';

const PARAM = 'previous_response_id';

/** One link as walked: whether the reader may read it, and the bytes up to it. */
export interface ChainLink {
  id: string;
  previousResponseId: string | null;
  readable: boolean;
  /** Content bytes of this link and every newer one. */
  totalBytes: number;
  /** A background response not finished yet: it has no output to continue. */
  inProgress: boolean;
}

export interface ChainBounds {
  /** Stored responses a chain may hold. */
  maxLinks: number;
  /** Content bytes they may hold together. */
  maxBytes: number;
}

/**
 * Throws why the chain from `requestedId` cannot be continued: a link the reader may not read
 * (or that does not exist) is 404 naming it, a chain over its bounds or with a background
 * response still running 400. `links`: newest first,
 * the walk having stopped at the first refusal.
 */
export function assertChainUsable(
  requestedId: string,
  links: readonly ChainLink[],
  bounds: ChainBounds,
): void {
  const unreadable = links.find((link) => !link.readable);
  if (links.length === 0 || unreadable)
    throw responseNotFound(unreadable?.id ?? requestedId, PARAM);
  if (links.length > bounds.maxLinks) {
    throw invalidResponseBody(
      `The previous_response_id chain holds more than ${bounds.maxLinks} stored responses`,
      PARAM,
    );
  }
  const oldest = links[links.length - 1]!;
  if (oldest.totalBytes > bounds.maxBytes) {
    throw invalidResponseBody(
      `The stored responses of the previous_response_id chain exceed ${bounds.maxBytes} bytes`,
      PARAM,
    );
  }
  // The walk found no row for the oldest link's predecessor: gone, or never this account's.
  if (oldest.previousResponseId !== null) throw responseNotFound(oldest.previousResponseId, PARAM);
  const running = links.find((link) => link.inProgress);
  if (running) {
    throw invalidResponseBody(
      `Response ${running.id} is a background response still in progress; continue it once it has finished`,
      PARAM,
    );
  }
}

/** The conversation, oldest first: each response's input items, then its output items. */
export const historyOf = (newestFirst: readonly ResponseContent[]): ResponseItemRecord[] =>
  [...newestFirst].reverse().flatMap(itemsOf);

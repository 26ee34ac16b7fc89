import { GatewayError } from './errors.js';
import { LIMITS } from './schemas/limits.js';

/*
 * Identifiers that end up inside the URLs of internal calls (model ids, account ids, hold ids).
 * A value taken from a client must never change which internal route a call reaches: a dot
 * segment ("..") would climb out of the path once the URL is normalised, and an encoded separator
 * would put a '/' or '\' where the caller meant one segment. Every internal URL is built from
 * values checked here, one segment at a time.
 */

// One catalog id segment: letters, digits and . _ : @ + -, never "." or "..".
const MODEL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+-]*(?:\/[A-Za-z0-9._:@+-]+)*$/;
const DOT_SEGMENT = /(?:^|\/)\.{1,2}(?:\/|$)/;

/** A catalog model id (`org/model-name`): what billing accepts on PUT and edge looks up. */
export function isValidModelId(id: string): boolean {
  return id.length <= LIMITS.modelIdMaxLength && MODEL_ID_PATTERN.test(id) && !DOT_SEGMENT.test(id);
}

export const MODEL_ID_RULE =
  'model id must be 1 to 256 characters from letters, digits and . _ : @ + - / (no empty or dot-only path segment)';

// Control characters, separators and the escape character itself: none belongs in one segment.
// eslint-disable-next-line no-control-regex
const UNSAFE_IN_SEGMENT = /[\u0000-\u001f\u007f/\\%?#]/;

/** Whether `value` can be one path segment of an internal URL as it is. */
export function isSafePathSegment(value: string): boolean {
  return value !== '' && value !== '.' && value !== '..' && !UNSAFE_IN_SEGMENT.test(value);
}

/**
 * One path segment of an internal URL, percent-encoded. A value that could change the route
 * (empty, a dot segment, a separator, an escape) is refused with 404: such an id names nothing.
 */
export function pathSegment(value: string): string {
  if (!isSafePathSegment(value)) throw new GatewayError('resource_not_found', 'No such resource');
  return encodeURIComponent(value);
}

/**
 * A model id as a route's `*modelId` parameter: the id itself, or 404 `model_not_found` when no
 * catalog entry could have it (checked before anything is sent).
 */
export function checkedModelId(id: string): string {
  if (!isValidModelId(id)) {
    throw new GatewayError('model_not_found', `Model not found: ${MODEL_ID_RULE}`, {
      param: 'model',
    });
  }
  return id;
}

/**
 * The last line of defence in an internal HTTP client: a path that URL normalisation would
 * change (a dot segment got through) is refused before any byte is sent.
 */
export function assertNormalizedPath(url: URL, path: string): void {
  const requested = path.split('?')[0];
  if (url.pathname !== requested) {
    throw new GatewayError('resource_not_found', 'No such resource');
  }
}

import { createHash } from 'node:crypto';
import type { AlertType } from '@gateway/contracts';

/**
 * An alert's id: a hash of what makes it one alert — the account, its type, its scope (a budget
 * id, or nothing), the threshold and the window it belongs to. Every replica evaluating the same
 * state computes the same id, and the outbox's primary key keeps the first: each alert is sent
 * once per window and threshold. Also the webhook's `webhook-id`, for receivers to deduplicate.
 */
export function alertEventId(
  accountId: string,
  type: AlertType,
  scope: string,
  threshold: string,
  window: string,
): string {
  const digest = createHash('sha256')
    .update([accountId, type, scope, threshold, window].join('\n'))
    .digest('hex');
  return `alr_${digest.slice(0, 32)}`;
}

import express, { type Router } from 'express';
import {
  DASHBOARD_OWNER_ROUTES as R,
  type DashboardRevealedWebhookSecret,
  type DashboardRevealedWebhookSecretList,
  type DashboardWebhookDelivery,
  type DashboardWebhookDeliveryList,
  type DashboardWebhookExpirePrevious,
  type DashboardWebhookSecretList,
  type WebhookDelivery,
  type WebhookSigningSecret,
} from '@gateway/contracts';
import { serveRoute } from '@gateway/runtime';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { ownerAccountId } from './owner-routes.js';
import { PAGE_PARAMS, pickQuery } from './query.js';

const deliveryOf = (d: WebhookDelivery): DashboardWebhookDelivery => ({
  id: d.id,
  job_id: d.job_id,
  event_type: d.event_type,
  status: d.status,
  attempts: d.attempts.length,
  last_response_code: d.attempts.at(-1)?.status_code ?? null,
  next_attempt_at: d.next_attempt_at,
  created_at: d.created_at,
});

/** One page of an account's deliveries (owners: their own; operators: any account's). */
export async function deliveryPage(
  deps: ConsoleDeps,
  accountId: string,
  query: Record<string, unknown>,
): Promise<DashboardWebhookDeliveryList> {
  const page = await deps.dispatcher.listDeliveries(
    accountId,
    new URLSearchParams(pickQuery(query, PAGE_PARAMS)),
  );
  return { object: 'list', data: page.deliveries.map(deliveryOf), next_cursor: page.next_cursor };
}

const secretsOf = async (deps: ConsoleDeps, accountId: string) =>
  (await deps.dispatcher.listSecrets(accountId)).secrets;

/** A secret as listed: never its value. */
const withoutValue = ({ id, created_at, expires_at }: WebhookSigningSecret) => ({
  id,
  created_at,
  expires_at,
});

/**
 * An owner's webhooks (`DASHBOARD_OWNER_ROUTES`, after `ownerOnly`): signing secrets (values
 * only on an explicit POST), rotation (limited per account by the dispatcher: its 429 and
 * `Retry-After` pass through), ending the previous secret's window now, the payload format,
 * deliveries and redelivery, always of the session's account.
 */
export function webhookRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  serveRoute(router, R.webhookSecrets, async ({ res }) => {
    const secrets = await secretsOf(deps, ownerAccountId(res));
    return { object: 'list', data: secrets.map(withoutValue) } satisfies DashboardWebhookSecretList;
  });
  serveRoute(router, R.revealWebhookSecrets, async ({ res }) => {
    const data: DashboardRevealedWebhookSecret[] = await secretsOf(deps, ownerAccountId(res));
    return { object: 'list', data } satisfies DashboardRevealedWebhookSecretList;
  });
  serveRoute(router, R.rotateWebhookSecret, async ({ res }) => {
    const secret = await deps.dispatcher.rotateSecret(ownerAccountId(res));
    const windows = (await secretsOf(deps, ownerAccountId(res)))
      .map((s) => s.expires_at)
      .filter((end): end is string => end !== null)
      .sort();
    return { secret, previous_expires_at: windows.at(-1) ?? null };
  });
  serveRoute(router, R.expirePreviousWebhookSecret, async ({ res }) => {
    const answer = await deps.dispatcher.expirePreviousSecret(ownerAccountId(res));
    const data = answer.secrets.map(withoutValue);
    return {
      object: 'list',
      data,
      expired: answer.expired,
    } satisfies DashboardWebhookExpirePrevious;
  });
  serveRoute(router, R.webhookSettings, async ({ res }) => {
    const account = await deps.billing.operator.getAccount(ownerAccountId(res));
    return { webhook_format: account.webhook_format };
  });
  serveRoute(
    router,
    R.putWebhookSettings,
    async ({ res, body }) => {
      const account = await deps.billing.operator.patchAccount(ownerAccountId(res), {
        webhook_format: body.webhook_format,
      });
      return { webhook_format: account.webhook_format };
    },
    jsonBody(deps.limits.jsonBodyBytes),
  );
  serveRoute(router, R.webhookDeliveries, ({ req, res }) =>
    deliveryPage(deps, ownerAccountId(res), req.query),
  );
  serveRoute(router, R.redeliverWebhook, async ({ res, params }) =>
    deliveryOf(await deps.dispatcher.redeliver(ownerAccountId(res), params.id)),
  );
  return router;
}

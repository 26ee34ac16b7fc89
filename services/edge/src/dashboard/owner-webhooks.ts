import express, { type Router } from 'express';
import {
  DashboardWebhookSettingsSchema,
  createBodyValidator,
  type DashboardRevealedWebhookSecret,
  type DashboardWebhookDelivery,
  type DashboardWebhookExpirePrevious,
  type DashboardWebhookDeliveryList,
  type DashboardWebhookRotation,
  type DashboardWebhookSecretList,
  type DashboardWebhookSettings,
  type WebhookDelivery,
  type WebhookSigningSecret,
} from '@gateway/contracts';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/context.js';
import { ownerAccountId } from './owner-routes.js';
import { PAGE_PARAMS, pickQuery } from './query.js';

const validateSettings = createBodyValidator<DashboardWebhookSettings>(
  DashboardWebhookSettingsSchema,
);

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
 * `/dashboard/api/webhooks` (owners, after `ownerOnly`): signing secrets (values only on an
 * explicit POST), rotation (limited per account by the dispatcher: its 429 and `Retry-After`
 * pass through), ending the previous secret's window now, the payload format, deliveries and
 * redelivery, always of the session's account.
 */
export function webhookRoutes(deps: ConsoleDeps): Router {
  const router = express.Router();
  router.get('/secrets', async (_req, res) => {
    const secrets = await secretsOf(deps, ownerAccountId(res));
    const list: DashboardWebhookSecretList = { object: 'list', data: secrets.map(withoutValue) };
    res.json(list);
  });
  router.post('/secrets/reveal', async (_req, res) => {
    const data: DashboardRevealedWebhookSecret[] = await secretsOf(deps, ownerAccountId(res));
    res.json({ object: 'list', data });
  });
  router.post('/secrets/rotate', async (_req, res) => {
    const secret = await deps.dispatcher.rotateSecret(ownerAccountId(res));
    const windows = (await secretsOf(deps, ownerAccountId(res)))
      .map((s) => s.expires_at)
      .filter((end): end is string => end !== null)
      .sort();
    const rotation: DashboardWebhookRotation = {
      secret,
      previous_expires_at: windows.at(-1) ?? null,
    };
    res.status(201).json(rotation);
  });
  router.post('/secrets/expire-previous', async (_req, res) => {
    const answer = await deps.dispatcher.expirePreviousSecret(ownerAccountId(res));
    const result: DashboardWebhookExpirePrevious = {
      object: 'list',
      data: answer.secrets.map(withoutValue),
      expired: answer.expired,
    };
    res.json(result);
  });
  router.get('/settings', async (_req, res) => {
    const account = await deps.billing.operator.getAccount(ownerAccountId(res));
    res.json({ webhook_format: account.webhook_format });
  });
  router.put('/settings', ...jsonBody(deps.limits.jsonBodyBytes), async (req, res) => {
    const body = validateSettings(req.body);
    const account = await deps.billing.operator.patchAccount(ownerAccountId(res), {
      webhook_format: body.webhook_format,
    });
    res.json({ webhook_format: account.webhook_format });
  });
  router.get('/deliveries', async (req, res) => {
    res.json(await deliveryPage(deps, ownerAccountId(res), req.query));
  });
  router.post('/deliveries/:id/redeliver', async (req, res) => {
    const delivery = await deps.dispatcher.redeliver(ownerAccountId(res), req.params.id ?? '');
    res.status(202).json(deliveryOf(delivery));
  });
  return router;
}

import express, { type Router } from 'express';
import {
  DashboardWebhookSettingsSchema,
  createBodyValidator,
  pathSegment,
  type DashboardRevealedWebhookSecret,
  type DashboardWebhookDelivery,
  type DashboardWebhookExpirePrevious,
  type DashboardWebhookDeliveryList,
  type DashboardWebhookRotation,
  type DashboardWebhookSecretList,
  type DashboardWebhookSettings,
} from '@gateway/contracts';
import type { ConsoleDeps } from '../deps.js';
import { jsonBody } from '../http/body.js';
import { adminCall, dispatcherCall } from './billing-calls.js';
import { accountPath } from './owner-routes.js';
import { PAGE_PARAMS, pickQuery } from './query.js';

const validateSettings = createBodyValidator<DashboardWebhookSettings>(
  DashboardWebhookSettingsSchema,
);

/** The dispatcher's delivery as its internal API answers it. */
interface WireDelivery {
  id: string;
  job_id: string;
  status: string;
  created_at: string;
  next_attempt_at: string | null;
  attempts: { status_code: number | null }[];
}

const deliveryOf = (d: WireDelivery): DashboardWebhookDelivery => ({
  id: d.id,
  job_id: d.job_id,
  status: d.status,
  attempts: d.attempts.length,
  last_response_code: d.attempts.at(-1)?.status_code ?? null,
  next_attempt_at: d.next_attempt_at,
  created_at: d.created_at,
});

/** One page of an account's deliveries (owners: their own; operators: any account's). */
export async function deliveryPage(
  deps: ConsoleDeps,
  accountPathPrefix: string,
  query: Record<string, unknown>,
): Promise<DashboardWebhookDeliveryList> {
  const page = await dispatcherCall<{ deliveries: WireDelivery[]; next_cursor: string | null }>(
    deps,
    {
      method: 'GET',
      path: `${accountPathPrefix}/webhook-deliveries?${pickQuery(query, PAGE_PARAMS)}`,
    },
  );
  return { object: 'list', data: page.deliveries.map(deliveryOf), next_cursor: page.next_cursor };
}

async function secretsOf(deps: ConsoleDeps, prefix: string) {
  const answer = await dispatcherCall<{ secrets: DashboardRevealedWebhookSecret[] }>(deps, {
    method: 'GET',
    path: `${prefix}/webhook-secrets`,
  });
  return answer.secrets;
}

/** A secret as listed: never its value. */
const withoutValue = ({ id, created_at, expires_at }: DashboardRevealedWebhookSecret) => ({
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
    const secrets = await secretsOf(deps, accountPath(res));
    const list: DashboardWebhookSecretList = { object: 'list', data: secrets.map(withoutValue) };
    res.json(list);
  });
  router.post('/secrets/reveal', async (_req, res) => {
    res.json({ object: 'list', data: await secretsOf(deps, accountPath(res)) });
  });
  router.post('/secrets/rotate', async (_req, res) => {
    const secret = await dispatcherCall<DashboardRevealedWebhookSecret>(deps, {
      method: 'POST',
      path: `${accountPath(res)}/webhook-secrets/rotate`,
    });
    const windows = (await secretsOf(deps, accountPath(res)))
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
    const answer = await dispatcherCall<{
      expired: number;
      secrets: DashboardRevealedWebhookSecret[];
    }>(deps, {
      method: 'POST',
      path: `${accountPath(res)}/webhook-secrets/expire-previous`,
    });
    const result: DashboardWebhookExpirePrevious = {
      object: 'list',
      data: answer.secrets.map(withoutValue),
      expired: answer.expired,
    };
    res.json(result);
  });
  router.get('/settings', async (_req, res) => {
    const account = await adminCall<DashboardWebhookSettings>(deps, {
      method: 'GET',
      path: accountPath(res),
    });
    res.json({ webhook_format: account.webhook_format });
  });
  router.put('/settings', ...jsonBody(deps.limits.jsonBodyBytes), async (req, res) => {
    const body = validateSettings(req.body);
    const account = await adminCall<DashboardWebhookSettings>(deps, {
      method: 'PATCH',
      path: accountPath(res),
      body: { webhook_format: body.webhook_format },
    });
    res.json({ webhook_format: account.webhook_format });
  });
  router.get('/deliveries', async (req, res) => {
    res.json(await deliveryPage(deps, accountPath(res), req.query));
  });
  router.post('/deliveries/:id/redeliver', async (req, res) => {
    const delivery = await dispatcherCall<WireDelivery>(deps, {
      method: 'POST',
      path: `${accountPath(res)}/webhook-deliveries/${pathSegment(req.params.id ?? '')}/redeliver`,
    });
    res.status(202).json(deliveryOf(delivery));
  });
  return router;
}

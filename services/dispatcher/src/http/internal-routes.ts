import express, { type Express, type Router } from 'express';
import {
  DISPATCHER_API_PREFIX,
  DISPATCHER_ROUTES as R,
  GatewayError,
  type WebhookDelivery,
  type WebhookDeliveryPage,
} from '@gateway/contracts';
import type { DeliveryQueries } from '../deliveries/delivery-queries.js';
import type { SigningSecrets } from '../secrets/signing-secrets.js';
import { identifyInternalCaller, serveRoute } from '@gateway/runtime';
import {
  accountIdParam,
  decodeCursor,
  deliveryToJson,
  encodeCursor,
  pageSize,
  secretToJson,
} from './wire.js';

export interface DispatcherServices {
  secrets: SigningSecrets;
  deliveries: DeliveryQueries;
}

/**
 * The API edge's operator routes proxy to and its dashboard calls (README "Internal API";
 * contract: `DISPATCHER_ROUTES`, packages/contracts). The dispatcher knows no accounts: edge
 * checks that an account exists before it calls.
 */
function internalRoutes({ secrets, deliveries }: DispatcherServices): Router {
  const router = express.Router();
  const activeOf = async (accountId: string) => (await secrets.active(accountId)).map(secretToJson);
  serveRoute(router, R.listSecrets, async ({ params }) => ({
    secrets: await activeOf(accountIdParam(params.accountId)),
  }));
  serveRoute(router, R.rotateSecret, async ({ params }) =>
    secretToJson(await secrets.rotate(accountIdParam(params.accountId))),
  );
  // Ends the previous secret's rotation window now; idempotent (`expired: 0` the second time).
  serveRoute(router, R.expirePreviousSecret, async ({ params }) => {
    const accountId = accountIdParam(params.accountId);
    const expired = await secrets.expirePrevious(accountId);
    return { expired, secrets: await activeOf(accountId) };
  });
  serveRoute(router, R.listDeliveries, ({ params, req }) =>
    deliveryPage(deliveries, accountIdParam(params.accountId), req.query),
  );
  serveRoute(router, R.redeliver, ({ params }) => redeliver(deliveries, params.deliveryId));
  // The dashboard's owner route: another account's delivery id is not found.
  serveRoute(router, R.redeliverOwn, ({ params }) =>
    redeliver(deliveries, params.deliveryId, accountIdParam(params.accountId)),
  );
  return router;
}

/** One page of the account's deliveries (`?limit`, `?cursor`), newest first. */
async function deliveryPage(
  deliveries: DeliveryQueries,
  accountId: string,
  query: { limit?: unknown; cursor?: unknown },
): Promise<WebhookDeliveryPage> {
  const limit = pageSize(query.limit);
  const page = await deliveries.listForAccount(accountId, limit, decodeCursor(query.cursor));
  if (!page) {
    throw new GatewayError('invalid_request_body', 'cursor is not valid', { param: 'cursor' });
  }
  const last = page.length === limit ? page[page.length - 1] : undefined;
  return { deliveries: page.map(deliveryToJson), next_cursor: last ? encodeCursor(last.id) : null };
}

/** Queues a finished delivery again (within `accountId` when given), or says why not. */
async function redeliver(
  deliveries: DeliveryQueries,
  deliveryId: string,
  accountId?: string,
): Promise<WebhookDelivery> {
  const result = await deliveries.redeliver(deliveryId, accountId);
  if (result.outcome === 'not_found') {
    throw new GatewayError('resource_not_found', 'No such webhook delivery');
  }
  if (result.outcome === 'purged') {
    throw new GatewayError('conflict', 'The result was purged after its retention');
  }
  if (result.outcome === 'in_progress') {
    throw new GatewayError('conflict', 'The delivery still has attempts scheduled');
  }
  return deliveryToJson(result.delivery);
}

/** Mounts the internal API behind the service credential. */
export function mountInternalApi(
  app: Express,
  services: DispatcherServices,
  internalToken: string,
): void {
  // Only edge calls the dispatcher.
  app.use(
    DISPATCHER_API_PREFIX,
    identifyInternalCaller({ edge: internalToken }),
    internalRoutes(services),
  );
}

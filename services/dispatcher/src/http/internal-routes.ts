import express, { type Express, type Router } from 'express';
import {
  GatewayError,
  type WebhookDeliveryPage,
  type WebhookExpirePreviousResult,
  type WebhookSigningSecretList,
} from '@gateway/contracts';
import type { DeliveryQueries } from '../deliveries/delivery-queries.js';
import type { SigningSecrets } from '../secrets/signing-secrets.js';
import { identifyInternalCaller } from '@gateway/runtime';
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
 * contract: packages/contracts/src/dispatcher-api.ts). The dispatcher knows no accounts: edge
 * checks that an account exists before it calls.
 */
function internalRoutes({ secrets, deliveries }: DispatcherServices): Router {
  const router = express.Router();

  router.get('/accounts/:accountId/webhook-secrets', async (req, res) => {
    const active = await secrets.active(accountIdParam(req.params.accountId));
    const list: WebhookSigningSecretList = { secrets: active.map(secretToJson) };
    res.json(list);
  });

  router.post('/accounts/:accountId/webhook-secrets/rotate', async (req, res) => {
    const secret = await secrets.rotate(accountIdParam(req.params.accountId));
    res.status(201).json(secretToJson(secret));
  });

  // Ends the previous secret's rotation window now; idempotent (`expired: 0` the second time).
  router.post('/accounts/:accountId/webhook-secrets/expire-previous', async (req, res) => {
    const accountId = accountIdParam(req.params.accountId);
    const expired = await secrets.expirePrevious(accountId);
    const active = await secrets.active(accountId);
    const result: WebhookExpirePreviousResult = { expired, secrets: active.map(secretToJson) };
    res.json(result);
  });

  router.get('/accounts/:accountId/webhook-deliveries', async (req, res) => {
    const limit = pageSize(req.query.limit);
    const cursor = decodeCursor(req.query.cursor);
    const page = await deliveries.listForAccount(
      accountIdParam(req.params.accountId),
      limit,
      cursor,
    );
    if (!page) {
      throw new GatewayError('invalid_request_body', 'cursor is not valid', { param: 'cursor' });
    }
    const last = page.length === limit ? page[page.length - 1] : undefined;
    const answer: WebhookDeliveryPage = {
      deliveries: page.map(deliveryToJson),
      next_cursor: last ? encodeCursor(last.id) : null,
    };
    res.json(answer);
  });

  const redeliver = async (res: express.Response, deliveryId: string, accountId?: string) => {
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
    res.status(202).json(deliveryToJson(result.delivery));
  };
  router.post('/webhook-deliveries/:deliveryId/redeliver', async (req, res) => {
    await redeliver(res, req.params.deliveryId);
  });
  // The dashboard's owner route: another account's delivery id is not found.
  router.post('/accounts/:accountId/webhook-deliveries/:deliveryId/redeliver', async (req, res) => {
    await redeliver(res, req.params.deliveryId, accountIdParam(req.params.accountId));
  });

  return router;
}

/** Mounts the internal API behind the service credential. */
export function mountInternalApi(
  app: Express,
  services: DispatcherServices,
  internalToken: string,
): void {
  // Only edge calls the dispatcher.
  app.use(
    '/internal/v1',
    identifyInternalCaller({ edge: internalToken }),
    internalRoutes(services),
  );
}

import express, { type Router } from 'express';
import { BILLING_ROUTES, publicNodeUrl, type NodeHealthList } from '@gateway/contracts';
import { serveBillingRoute } from '../http/billing-route.js';
import type { NodeHealthService } from './node-health.js';

/**
 * `POST /internal/v1/nodes/health` (`BILLING_ROUTES.reportNodeHealth`): the worker's credential
 * alone may report (least privilege).
 */
export function nodeHealthReportRoutes(service: NodeHealthService): Router {
  const router = express.Router();
  serveBillingRoute(router, BILLING_ROUTES.reportNodeHealth, async ({ body: report }) => {
    // Stripped again here: a credential in a URL must never reach the table.
    const nodes = report.nodes.map((node) => ({ ...node, url: publicNodeUrl(node.url) }));
    await service.record({ workerId: report.workerId, nodes });
    return { accepted: nodes.length };
  });
  return router;
}

/** `GET /internal/v1/admin/nodes/health` (operator API, mounted behind edge-only). */
export function nodeHealthAdminRoutes(service: NodeHealthService): Router {
  const router = express.Router();
  router.get('/nodes/health', async (_req, res) => {
    const answer: NodeHealthList = { nodes: await service.list() };
    res.json(answer);
  });
  return router;
}

import express, { type Router } from 'express';
import { allowInternalCallers } from '@gateway/runtime';
import {
  createBodyValidator,
  NodeHealthReportSchema,
  publicNodeUrl,
  type NodeHealthList,
  type NodeHealthReport,
} from '@gateway/contracts';
import type { NodeHealthService } from './node-health.js';

const validateReport = createBodyValidator<NodeHealthReport>(NodeHealthReportSchema);

/** `POST /internal/v1/nodes/health`: the worker's credential alone may report (least privilege). */
export function nodeHealthReportRoutes(service: NodeHealthService): Router {
  const router = express.Router();
  router.post('/nodes/health', allowInternalCallers('worker'), async (req, res) => {
    const report = validateReport(req.body);
    // Stripped again here: a credential in a URL must never reach the table.
    const nodes = report.nodes.map((node) => ({ ...node, url: publicNodeUrl(node.url) }));
    await service.record({ workerId: report.workerId, nodes });
    res.json({ accepted: nodes.length });
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

export {
  createNodeHealthService,
  NODE_HEALTH_STALE_AFTER_MS,
  NODE_HEALTH_FORGET_AFTER_MS,
  type NodeHealthService,
} from './node-health.js';
export { nodeHealthAdminRoutes, nodeHealthReportRoutes } from './node-health-routes.js';

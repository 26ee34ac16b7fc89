export { createNodeHealthService, type NodeHealthService } from './node-health.js';
export { nodeHealthAdminRoutes, nodeHealthReportRoutes } from './node-health-routes.js';

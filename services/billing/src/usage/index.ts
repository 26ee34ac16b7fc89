export { createUsageService, type UsageService } from './usage-service.js';
export { UsageStore } from './usage-store.js';
export { accountUsageRoutes, adminUsageRoutes } from './usage-routes.js';

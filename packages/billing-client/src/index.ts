export {
  createBillingClient,
  type Admission,
  type BillingClient,
  type BillingClientOptions,
  type SettleOutcome,
  type VoidOutcome,
} from './client.js';
export { CatalogCache } from './catalog-cache.js';
export { credentialRefused, errorFromAnswer, rateLimitFromHeaders } from './wire-errors.js';

export { ResponseRepository } from './response-repository.js';
export { StoredResponses, type StoredResponsesDeps } from './stored-responses.js';
export { responseRoutes } from './response-routes.js';
export { ResponseWebhookRepository } from './response-webhook-repository.js';
export { ResponseWebhookOutbox, startWebhookOutbox } from './response-webhooks.js';

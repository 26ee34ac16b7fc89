export { AlertEngine, type AlertEngineOptions } from './alert-engine.js';
export { AlertEvaluator, type AlertEvent } from './alert-evaluator.js';
export { AlertOutbox, type AlertRoute, type PublishResult } from './alert-outbox.js';
export { AlertRepository } from './alert-repository.js';
export { AlertSettings, alertUrlAad } from './alert-settings.js';

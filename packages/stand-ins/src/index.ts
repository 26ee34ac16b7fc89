/*
 * Stand-ins for what lies outside the gateway: model servers and the external reasoning-model
 * provider. For tests, local mode and benchmarks only; never part of the product.
 */
export {
  createStandInModelNode,
  type StandInModelNode,
  type StandInModelNodeOptions,
} from './model-node.js';
export {
  createStandInProvider,
  type StandInProvider,
  type StandInProviderOptions,
} from './provider.js';
export {
  REASONING_TOKENS_BY_EFFORT,
  type ReasoningEffort,
  type StandInProviderModel,
} from './provider-validate.js';
export { DEFAULT_NODE_SETTINGS, type StandInNodeSettings } from './node-settings.js';
export type { StandInFault } from './faults.js';
export type { AbortRecord, MarkedCalls, RecordedRequest, StandInStats } from './traffic.js';
export { standInAnswer, type AnswerLength } from './answer.js';
export { VIDEO_TOKENS_PER_SECOND } from './node-media.js';
export { MAX_GENERATED_TOKENS } from './limits.js';

/*
 * `_service` of an answer: what billing charged, from the worker's final reply. One pure function
 * shared by every inference route and the Responses API (no Express, no dependencies).
 */
import { holdIdOfJob, microDzdFromWire, microDzdToDzd } from '@gateway/contracts';
import type { InferenceReplyPayload, ServiceBlock } from '@gateway/contracts';

/**
 * `_service` of a successful answer: the settled cost and the balance after it, from the worker's
 * final reply (µDZD digit strings → DZD numbers with up to 6 decimals), and the hold's id (the
 * receipt's key). `warnings` only when the external provider's allowlist dropped something
 * (spec: absent otherwise).
 */
export function serviceBlock(final: InferenceReplyPayload): ServiceBlock {
  const block: ServiceBlock = { hold_id: holdIdOfJob(final.jobId) };
  if (final.costMicroDzd !== undefined) {
    block.cost_dzd = microDzdToDzd(microDzdFromWire(final.costMicroDzd));
  }
  if (final.balanceMicroDzd !== undefined) {
    block.balance_dzd = microDzdToDzd(microDzdFromWire(final.balanceMicroDzd));
  }
  if (final.settlementPending === true) block.settlement = 'pending';
  if (final.warnings && final.warnings.length > 0) block.warnings = [...final.warnings].sort();
  return block;
}

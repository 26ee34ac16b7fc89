import { randomBytes } from 'node:crypto';

/*
 * Ids the gateway mints for the Responses API: the reference's prefixes and 32 random hex digits
 * (128 bits: an id is unguessable, though it never grants access by itself).
 */

const hex = () => randomBytes(16).toString('hex');

export const newResponseId = () => `resp_${hex()}`;
export const newMessageId = () => `msg_${hex()}`;
export const newFunctionCallId = () => `fc_${hex()}`;
export const newFunctionCallOutputId = () => `fco_${hex()}`;
export const newReasoningId = () => `rs_${hex()}`;

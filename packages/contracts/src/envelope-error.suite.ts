import { EnvelopeError } from './envelopes.js';

/** The EnvelopeError `fn` throws (any other error is rethrown; none at all fails the test). */
export function envelopeError(fn: () => unknown): EnvelopeError {
  try {
    fn();
  } catch (error) {
    if (error instanceof EnvelopeError) return error;
    throw error;
  }
  throw new Error('expected an EnvelopeError');
}

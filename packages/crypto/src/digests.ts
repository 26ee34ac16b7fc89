/**
 * Digests and their comparison: the SHA-256 lookup digest of API keys and scoped tokens (billing
 * stores only digests; edge computes one to admit an API key itself, ADR 0070), and a comparison
 * whose time says nothing of the values compared.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/** SHA-256, lowercase hex. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/**
 * Constant-time string equality. Both sides are hashed first, so the comparison time depends on
 * neither the contents nor the lengths of the inputs.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a, 'utf8').digest();
  const right = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(left, right);
}

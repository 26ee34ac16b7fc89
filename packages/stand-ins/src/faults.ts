import { MAX_FAULT_COUNT } from './limits.js';

/*
 * Faults a test injects into a stand-in to see how the gateway copes with a misbehaving
 * upstream. A fault with a count applies to that many requests and then clears itself.
 * A refused connection needs no fault: close the stand-in.
 */

export type StandInFault =
  /** Answer with this HTTP status (400-599) and an error body; 429 adds Retry-After. */
  | { kind: 'status'; status: number; count?: number; retryAfterS?: number }
  /** Accept the request and never answer, until the client gives up or the stand-in closes. */
  | { kind: 'timeout'; count?: number }
  /** Send afterTokens tokens then destroy the socket (never completes the response). */
  | { kind: 'drop-mid-stream'; afterTokens: number; count?: number }
  /** Answer 200 with a body that is not what the protocol promises. */
  | { kind: 'garbage'; count?: number }
  /** Health check answers 503 while requests are still served. */
  | { kind: 'unhealthy' };

export type RequestFault = Exclude<StandInFault, { kind: 'unhealthy' }>;

function isCount(value: unknown): boolean {
  return value === undefined || (Number.isInteger(value) && (value as number) >= 1);
}

/** Why a fault is invalid, or null when it is valid. */
export function faultProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return 'fault must be an object';
  const fault = value as Record<string, unknown>;
  if (!isCount(fault.count) || (fault.count as number) > MAX_FAULT_COUNT) {
    return `count must be an integer from 1 to ${MAX_FAULT_COUNT}`;
  }
  switch (fault.kind) {
    case 'status': {
      const status = fault.status;
      if (!Number.isInteger(status) || (status as number) < 400 || (status as number) > 599) {
        return 'status must be an integer from 400 to 599';
      }
      const retry = fault.retryAfterS;
      return retry === undefined || (Number.isInteger(retry) && (retry as number) >= 0)
        ? null
        : 'retryAfterS must be a non-negative integer';
    }
    case 'drop-mid-stream':
      return Number.isInteger(fault.afterTokens) && (fault.afterTokens as number) >= 0
        ? null
        : 'afterTokens must be a non-negative integer';
    case 'timeout':
    case 'garbage':
    case 'unhealthy':
      return null;
    default:
      return 'kind must be status, timeout, drop-mid-stream, garbage or unhealthy';
  }
}

export class FaultState {
  private fault: StandInFault | null = null;
  private remaining: number | null = null;

  set(fault: StandInFault): void {
    const problem = faultProblem(fault);
    if (problem !== null) throw new Error(`invalid stand-in fault: ${problem}`);
    this.fault = { ...fault };
    this.remaining = 'count' in fault && fault.count !== undefined ? fault.count : null;
  }

  clear(): void {
    this.fault = null;
    this.remaining = null;
  }

  current(): StandInFault | null {
    return this.fault === null ? null : { ...this.fault };
  }

  /** The fault for the next request, consuming one use of a counted fault. */
  take(): RequestFault | null {
    const fault = this.fault;
    if (fault === null || fault.kind === 'unhealthy') return null;
    if (this.remaining !== null) {
      this.remaining -= 1;
      if (this.remaining <= 0) this.clear();
    }
    return fault;
  }

  /** Health is bad while the node is marked unhealthy or fails every request with a 5xx. */
  healthy(): boolean {
    const fault = this.fault;
    if (fault === null) return true;
    if (fault.kind === 'unhealthy') return false;
    return !(fault.kind === 'status' && fault.status >= 500 && this.remaining === null);
  }
}

import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import type { Exchange } from './traffic.js';

/*
 * Timing of generation: the first token after firstTokenLatencyMs, the next ones at
 * tokensPerSecond. Pacing is read at every step so setOptions takes effect mid-stream.
 */

export interface Pacing {
  firstTokenLatencyMs: number;
  /** 0 means no delay between tokens. */
  tokensPerSecond: number;
}

/** Waits, or resolves false as soon as the request is stopped. */
export async function waitMs(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  try {
    // Without a delay, still yield so a disconnect can be noticed between tokens.
    if (ms >= 1) await sleep(ms, undefined, { signal });
    else await yieldToLoop(undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs stepCount generation steps; onStep emits the step's tokens and returns how many it
 * sent. Returns false when the client went away or a drop fault cut the connection; a drop
 * fault always cuts, at the end at the latest, so the response never completes.
 */
export async function runSteps(
  exchange: Exchange,
  pacing: () => Pacing,
  stepCount: number,
  onStep: (step: number) => number,
): Promise<boolean> {
  if (!(await waitMs(pacing().firstTokenLatencyMs, exchange.signal))) return false;
  let dueAtMs = performance.now();
  for (let step = 0; step < stepCount; step += 1) {
    if (exchange.dropAfterTokens !== null && exchange.tokensGenerated >= exchange.dropAfterTokens) {
      exchange.drop();
      return false;
    }
    if (step > 0) {
      const { tokensPerSecond } = pacing();
      // A schedule rather than a fixed sleep, so timer overshoot does not accumulate.
      dueAtMs += tokensPerSecond > 0 ? 1000 / tokensPerSecond : 0;
      if (!(await waitMs(dueAtMs - performance.now(), exchange.signal))) return false;
    }
    exchange.tokensGenerated += onStep(step);
  }
  if (exchange.dropAfterTokens !== null) {
    exchange.drop();
    return false;
  }
  return !exchange.signal.aborted;
}

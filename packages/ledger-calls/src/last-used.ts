/**
 * API keys' "last used" (the dashboard's key list), written by whoever admits the request:
 * billing, and edge for the API keys it admits itself (ADR 0070).
 */
import type pg from 'pg';

type Clock = () => Date;

const TOUCH_LAST_USED = {
  name: 'billing_touch_api_key_v1',
  text: 'SELECT billing_touch_api_key_v1($1, $2, $3, $4)',
};

/**
 * Sets the key's `last_used_at` to `at`, unless written less than `intervalS` before it
 * (`billing_touch_api_key_v1`, which edge's role may execute although it may not update the
 * table).
 */
async function touchApiKeyLastUsed(
  pool: pg.Pool,
  accountId: string,
  keyName: string,
  at: Date,
  intervalS: number,
): Promise<void> {
  await pool.query({ ...TOUCH_LAST_USED, values: [accountId, keyName, at, intervalS] });
}

export interface LastUsedOptions {
  pool: pg.Pool;
  clock: Clock;
  /** At most one write per key in this interval; 60 s by default. */
  intervalMs?: number;
  /** Keys remembered at once; beyond it the memory is cleared (a few extra writes). */
  maxTracked?: number;
  onError?: (error: unknown) => void;
}

/**
 * "Last used" of API keys (the dashboard's key list), written cheaply: off the request's path
 * (not awaited), at most once per key and interval per billing replica (remembered in memory),
 * and the statement itself skips a row written less than an interval ago (other replicas).
 * A request made through a scoped token counts as a use of the key that signed it.
 */
export class ApiKeyLastUsed {
  readonly #options: LastUsedOptions;
  readonly #intervalMs: number;
  readonly #writtenAtMs = new Map<string, number>();

  constructor(options: LastUsedOptions) {
    this.#options = options;
    this.#intervalMs = options.intervalMs ?? 60_000;
  }

  touch(accountId: string, keyName: string): void {
    const now = this.#options.clock();
    const id = `${accountId}\u0000${keyName}`;
    const last = this.#writtenAtMs.get(id);
    if (last !== undefined && now.getTime() - last < this.#intervalMs) return;
    if (this.#writtenAtMs.size >= (this.#options.maxTracked ?? 10_000)) this.#writtenAtMs.clear();
    this.#writtenAtMs.set(id, now.getTime());
    touchApiKeyLastUsed(this.#options.pool, accountId, keyName, now, this.#intervalMs / 1000).catch(
      (error: unknown) => this.#options.onError?.(error),
    );
  }
}

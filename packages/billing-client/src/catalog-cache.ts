import type { CatalogEntry } from '@gateway/contracts';

/**
 * Catalog entries kept in memory so a request costs no catalog call. A lookup that names the
 * version it needs (`updatedAt`, the worker's from the job's admission) is answered from memory
 * whenever the cached entry is that version or newer, however old the fetch: it is fetched again
 * only when an admission names a newer version (a price or node change reaches the worker with
 * the very next job). A lookup without a version refetches entries older than `ttlMs`. Concurrent
 * lookups of one id share one fetch. At most `maxEntries` ids are kept (the oldest go first).
 */
export class CatalogCache {
  readonly #entries = new Map<string, { entry: Promise<CatalogEntry>; fetchedAtMs: number }>();
  #list: { models: Promise<CatalogEntry[]>; fetchedAtMs: number } | undefined;

  constructor(
    private readonly options: {
      ttlMs: number;
      fetchOne: (id: string) => Promise<CatalogEntry>;
      fetchAll: () => Promise<CatalogEntry[]>;
      maxEntries?: number;
      now?: () => number;
    },
  ) {}

  async get(id: string, atLeastUpdatedAt?: string): Promise<CatalogEntry> {
    const now = this.#now();
    const cached = this.#entries.get(id);
    const fresh =
      atLeastUpdatedAt !== undefined || now - (cached?.fetchedAtMs ?? 0) < this.options.ttlMs;
    if (cached && fresh) {
      const entry = await cached.entry.catch(() => undefined);
      if (entry && !olderThan(entry, atLeastUpdatedAt)) return entry;
    }
    const entry = this.options.fetchOne(id);
    this.#remember(id, entry, now);
    // A failed fetch is not kept: the next lookup tries again.
    entry.catch(() => this.#entries.delete(id));
    return entry;
  }

  async list(): Promise<CatalogEntry[]> {
    const now = this.#now();
    if (this.#list && now - this.#list.fetchedAtMs < this.options.ttlMs) {
      const models = await this.#list.models.catch(() => undefined);
      if (models) return models;
    }
    const models = this.options.fetchAll();
    this.#list = { models, fetchedAtMs: now };
    return models;
  }

  clear(): void {
    this.#entries.clear();
    this.#list = undefined;
  }

  #remember(id: string, entry: Promise<CatalogEntry>, now: number): void {
    this.#entries.delete(id);
    this.#entries.set(id, { entry, fetchedAtMs: now });
    const max = this.options.maxEntries ?? 1_000;
    while (this.#entries.size > max) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  #now(): number {
    return this.options.now?.() ?? Date.now();
  }
}

function olderThan(entry: CatalogEntry, updatedAt: string | undefined): boolean {
  return updatedAt !== undefined && Date.parse(entry.updatedAt) < Date.parse(updatedAt);
}

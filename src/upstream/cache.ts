/**
 * Answers kept per licensee, endpoint and parameters for the endpoint's lifetime, filed under tags
 * so that a mutation drops what it changes. Values are shared between callers: never mutate them.
 */
export interface CacheStore {
  get(key: string): Promise<unknown | undefined>;
  set(key: string, value: unknown, ttlMs: number, tags: string[]): Promise<void>;
  /**
   * `changedUpstream`: what is filed under the tag was changed by someone else and read from the
   * service since (a change feed's poll), rather than by our own write: a copy of it may still
   * stand in, marked stale, for a read the budget refuses (see SharedReads.refresh).
   */
  dropTag(tag: string, changedUpstream?: boolean): Promise<void>;
  clear(): Promise<void>;
  /** Optional, for a store shared by replicas: told of each tag another replica dropped. */
  onDropped?(listener: (tag: string, changedUpstream: boolean) => void): void;
  /**
   * Optional, for a store that holds its answers here: each answer under the tag replaced by what
   * `revise` makes of it (undefined: left as it is; DROPPED: dropped), keeping its lifetime.
   */
  revise?(tag: string, revise: (key: string, value: unknown) => unknown): void;
}

/** What a revision answers for an answer it cannot bring up to date: it is dropped. */
export const DROPPED: unique symbol = Symbol('dropped');

export class MemoryCacheStore implements CacheStore {
  private readonly entries = new Map<string, { value: unknown; expires: number; tags: string[] }>();
  private readonly byTag = new Map<string, Set<string>>();
  private nextSweep = 0;

  constructor(
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Answers held, expired ones not yet dropped included. */
  get size(): number {
    return this.entries.size;
  }

  async get(key: string) {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= this.now()) {
      this.delete(key);
      return undefined;
    }
    return entry.value;
  }

  async set(key: string, value: unknown, ttlMs: number, tags: string[]) {
    this.delete(key);
    // Expired answers nobody reads again (distinct pages of 1 MB each, decoded) are dropped here,
    // at most once a second, rather than held until 10,000 newer ones push them out.
    const now = this.now();
    if (now >= this.nextSweep) {
      this.nextSweep = now + 1000;
      for (const [held, entry] of this.entries) if (entry.expires <= now) this.delete(held);
    }
    if (this.entries.size >= this.maxEntries) {
      // Maps iterate in insertion order: the oldest entry goes first.
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.delete(oldest);
    }
    this.entries.set(key, { value, expires: this.now() + ttlMs, tags });
    for (const tag of tags) {
      let keys = this.byTag.get(tag);
      if (!keys) this.byTag.set(tag, (keys = new Set()));
      keys.add(key);
    }
  }

  async dropTag(tag: string) {
    for (const key of this.byTag.get(tag) ?? []) this.delete(key);
    this.byTag.delete(tag);
  }

  revise(tag: string, revise: (key: string, value: unknown) => unknown): void {
    for (const key of [...(this.byTag.get(tag) ?? [])]) {
      const entry = this.entries.get(key);
      if (!entry) continue;
      const revised = revise(key, entry.value);
      if (revised === DROPPED) this.delete(key);
      else if (revised !== undefined) entry.value = revised;
    }
  }

  async clear() {
    this.entries.clear();
    this.byTag.clear();
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    for (const tag of entry.tags) this.byTag.get(tag)?.delete(key);
  }
}

/** A stable key for parameters: the same values in any property order give the same text. */
export function stableKey(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableKey).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableKey(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

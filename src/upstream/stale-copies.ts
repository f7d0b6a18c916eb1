/** Copies kept at most, whatever their size: a page count costs little, but each is a Map entry and its tags. */
export const STALE_MAX_ENTRIES = 5_000;
/**
 * The answers' bytes kept at most, as received (the JSON text's length). A page is kept as its bytes
 * (kept-page.ts); other answers decoded, which take more than their text, so this bounds the stale
 * copies' share of memory to a small multiple of it: 64 MiB of answers is 64 pages of 1000
 * reservations of 1 KiB each.
 */
export const STALE_MAX_BYTES = 64 * 1024 * 1024;

export interface StaleCopiesOptions {
  /** How old a copy may be when it is served (0: no copy is kept). */
  maxAgeMs: number;
  maxEntries?: number;
  maxBytes?: number;
  /** The client's clock: a copy's age is read on the clock its deadlines are. */
  now?: () => number;
}

interface Copy {
  value: unknown;
  fetchedAt: number;
  bytes: number;
  tags: readonly string[];
}

/**
 * The last answer of each read (licensee, endpoint and parameters: the shared reads' key), kept in
 * this process after the page cache let it go, to answer that read when the licensee's budget
 * cannot before the call's deadline. The value is the page cache's own object, never a copy.
 * A copy filed under a tag our own write drops (here or on another replica) is forgotten at once:
 * a copy older than our write is never served. A change read from the service (a change feed)
 * revises the copy or leaves it (`revise`): it still stands in, marked stale. The oldest copies go first when the store is
 * over its entries or bytes; Maps iterate in insertion order and a copy is re-inserted when
 * renewed, so the first entry is always the oldest.
 */
export class StaleCopies {
  private readonly copies = new Map<string, Copy>();
  private readonly byTag = new Map<string, Set<string>>();
  private bytes = 0;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private readonly now: () => number;

  constructor(private readonly options: StaleCopiesOptions) {
    this.maxEntries = options.maxEntries ?? STALE_MAX_ENTRIES;
    this.maxBytes = options.maxBytes ?? STALE_MAX_BYTES;
    this.now = options.now ?? Date.now;
  }

  get enabled(): boolean {
    return this.options.maxAgeMs > 0;
  }

  /** Keeps `value` as the read's last answer, fetched now. */
  keep(key: string, value: unknown, tags: readonly string[], bytes: number): void {
    if (!this.enabled || bytes > this.maxBytes) return;
    this.delete(key);
    this.copies.set(key, { value, fetchedAt: this.now(), bytes, tags });
    this.bytes += bytes;
    for (const tag of tags) {
      let keys = this.byTag.get(tag);
      if (!keys) this.byTag.set(tag, (keys = new Set()));
      keys.add(key);
    }
    const oldestAllowed = this.now() - this.options.maxAgeMs;
    for (const [oldest, copy] of this.copies) {
      const over = this.copies.size > this.maxEntries || this.bytes > this.maxBytes;
      if (!over && copy.fetchedAt >= oldestAllowed) break;
      this.delete(oldest);
    }
  }

  /** The read's last answer and its age, when one is held that is no older than the maximum age. */
  get(key: string): { value: unknown; ageMs: number } | undefined {
    const copy = this.copies.get(key);
    if (!copy) return undefined;
    const ageMs = Math.max(0, this.now() - copy.fetchedAt);
    if (ageMs > this.options.maxAgeMs) {
      this.delete(key);
      return undefined;
    }
    return { value: copy.value, ageMs };
  }

  /**
   * Each copy under the tag replaced by what `revise` makes of it, as fresh as the change it was
   * revised with (undefined: left as it is, still a copy of its answer when it was read; its size is
   * counted as it was, a revision replaces or adds a record or two).
   */
  revise(tag: string, revise: (key: string, value: unknown) => unknown): void {
    for (const key of [...(this.byTag.get(tag) ?? [])]) {
      const copy = this.copies.get(key);
      const revised = copy && revise(key, copy.value);
      if (!copy || revised === undefined) continue;
      this.copies.delete(key);
      this.copies.set(key, { ...copy, value: revised, fetchedAt: this.now() });
    }
  }

  dropTag(tag: string): void {
    for (const key of this.byTag.get(tag) ?? []) this.delete(key);
    this.byTag.delete(tag);
  }

  clear(): void {
    this.copies.clear();
    this.byTag.clear();
    this.bytes = 0;
  }

  /** Copies held and their bytes (tests, and the bound's documentation). */
  size(): { entries: number; bytes: number } {
    return { entries: this.copies.size, bytes: this.bytes };
  }

  private delete(key: string): void {
    const copy = this.copies.get(key);
    if (!copy) return;
    this.copies.delete(key);
    this.bytes -= copy.bytes;
    for (const tag of copy.tags) {
      const keys = this.byTag.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) this.byTag.delete(tag);
    }
  }
}

const WIRE_LIST = '$wireList';

/** The service's records of a LazyList read back from JSON (see `toJSON`); undefined for any other value. */
export function wireListOf(value: unknown): readonly unknown[] | undefined {
  const raw = (value as { [WIRE_LIST]?: unknown } | null)?.[WIRE_LIST];
  return typeof value === 'object' && value !== null && Array.isArray(raw) ? raw : undefined;
}

/**
 * A page of records decoded on demand. The service answers reservations and answers 1000 at a time,
 * while a query often wants a handful: each record is checked and converted (dates, numbers) only
 * when it is read, and once. Positions are the service's own, so offsets stay exact; a record that
 * does not decode (no id) reads as null and is left out of slices.
 */
export class LazyList<T> {
  private readonly cache: (T | null | undefined)[];

  constructor(
    readonly length: number,
    private readonly decodeAt: (index: number) => T | null,
    /** The records as the service sent them, when this list reads them (not a `map` of another). */
    private readonly raw?: readonly unknown[],
  ) {
    this.cache = new Array(length);
  }

  static of<T>(raw: readonly unknown[], decode: (value: unknown) => T | null): LazyList<T> {
    return new LazyList(raw.length, (i) => decode(raw[i]), raw);
  }

  /**
   * What a cache that keeps JSON (Redis) stores: the records as the service sent them, marked, so
   * that the reader decodes them again (`wireListOf`); a list read back as a plain object has no `at`.
   */
  toJSON(): { [WIRE_LIST]: readonly unknown[] } {
    return { [WIRE_LIST]: this.raw ?? this.slice() };
  }

  /** The record at a position, or null when there is none or it does not decode. */
  at(index: number): T | null {
    if (index < 0 || index >= this.length) return null;
    let value = this.cache[index];
    if (value === undefined) this.cache[index] = value = this.decodeAt(index);
    return value;
  }

  /**
   * The decodable records between two positions (Array.prototype.slice's arguments). Records left
   * out shift the indexes of the result: number cursors by `at` positions, never by this.
   */
  slice(start = 0, end = this.length): T[] {
    const out: T[] = [];
    for (let i = Math.max(0, start); i < Math.min(end, this.length); i++) {
      const value = this.at(i);
      if (value !== null) out.push(value);
    }
    return out;
  }

  /** Another lazy list over the same positions, each record passed through `fn` when read. */
  map<U>(fn: (value: T) => U): LazyList<U> {
    return new LazyList(this.length, (i) => {
      const value = this.at(i);
      return value === null ? null : fn(value);
    });
  }
}

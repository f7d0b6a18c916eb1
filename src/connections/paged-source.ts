import { createHash } from 'node:crypto';
import { stableKey } from '../upstream/cache.ts';

/** The service answers paged lists 1000 records a page. */
export const UPSTREAM_PAGE = 1000;

/**
 * A page as the upstream layer answers it: an array, or a LazyList that decodes what is read.
 * Positions are the service's own; a record that does not decode reads as null and keeps its place.
 */
export interface Page<T> {
  readonly length: number;
  at(index: number): T | null | undefined;
}

/** One paginated upstream list, as the request's calls (resolvers/request-calls.ts) serve it. */
export interface PagedSource<T> {
  /** Hash of what the list is (endpoint, event, filter), carried in cursors. */
  key: string;
  /** The licensee whose list it is, carried in cursors: another licensee's cursor is refused. */
  licensee: string;
  pageCount(): Promise<number>;
  /** Page n (1-based) of at most 1000 records; empty past the last page. */
  page(n: number): Promise<Page<T>>;
  /**
   * Reads page n ahead for a later request, in the background and only with budget headroom, so
   * that it finds the page kept (UPSTREAM_PAGE_TTL_MS): the exact read `page(n)` would make. Never fails.
   */
  readAhead?(n: number): void;
  /**
   * The key the service sorts the list by (ascending), or null when a record lacks it. Carried in
   * cursors, so a walk resumed after the list changed neither skips nor repeats a record.
   */
  orderOf?: (record: T) => readonly number[] | null;
  /** Told once of the positions whose records did not decode (skipped, without moving a cursor). */
  onUndecodable?: (positions: number[]) => void;
}

export function sourceKey(parts: unknown): string {
  return createHash('sha256').update(stableKey(parts)).digest('base64url').slice(0, 12);
}

/** A source over a list already in memory (an attendee's few reservations). */
export function memorySource<T>(
  { key, licensee }: Pick<PagedSource<T>, 'key' | 'licensee'>,
  load: () => Promise<T[]>,
  orderOf?: (record: T) => readonly number[] | null,
): PagedSource<T> {
  let all: Promise<T[]> | undefined;
  const list = () => (all ??= load());
  return {
    key,
    licensee,
    orderOf,
    pageCount: async () => Math.ceil((await list()).length / UPSTREAM_PAGE),
    page: async (n) => (await list()).slice((n - 1) * UPSTREAM_PAGE, n * UPSTREAM_PAGE),
  };
}

/** The records of a page that decode, in order (for callers that want records, not positions). */
export function recordsOf<T>(page: Page<T>): T[] {
  const records: T[] = [];
  for (let i = 0; i < page.length; i++) {
    const record = page.at(i);
    if (record != null) records.push(record);
  }
  return records;
}

const mappedPages = new WeakMap<object, unknown>();

/**
 * A page passed through `map` once per upstream answer: the request's calls (resolvers/request-calls.ts) hand every window the
 * same answer object, so they share one mapped page too (each record decoded once, and a record
 * that does not decode reported once). A page object is only ever mapped by one source.
 */
export function mapPageOnce<P extends object, R>(page: P, map: (page: P) => R): R {
  if (!mappedPages.has(page)) mappedPages.set(page, map(page));
  return mappedPages.get(page) as R;
}

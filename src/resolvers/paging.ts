import { createHash } from 'node:crypto';
import { stableKey } from '../upstream/cache.ts';
import { BadInputError } from '../upstream/errors.ts';

/**
 * Relay connections over the service's pages of 1000. A cursor is an offset into the filtered
 * list plus a hash of the filter, so a cursor from another filter is refused. Offsets are stable
 * while nothing is added before them: a reservation added upstream shifts later cursors by one.
 */

export const UPSTREAM_PAGE = 1000;
export const DEFAULT_WINDOW = 100;
export const MAX_WINDOW = 5000;

/** A page as the upstream layer answers it: an array, or a LazyList that decodes what is read. */
export interface Page<T> {
  readonly length: number;
  slice(start?: number, end?: number): T[];
}

/** One paginated upstream list, as the request's loaders serve it. */
export interface PagedSource<T> {
  /** Hash of what the list is (endpoint, event, filter), carried in cursors. */
  key: string;
  pageCount(): Promise<number>;
  /** Page n (1-based) of at most 1000 records; empty past the last page. */
  page(n: number): Promise<Page<T>>;
}

export interface WindowArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

export interface Connection<T> {
  edges: PromiseLike<{ cursor: string; node: T }[]>;
  pageInfo: PromiseLike<{
    hasNextPage: boolean | PromiseLike<boolean>;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  }>;
  /** Computed only when a client reads it: page count plus the last page, unless the window saw the end. */
  totalCount: PromiseLike<number>;
}

export function sourceKey(parts: unknown): string {
  return createHash('sha256').update(stableKey(parts)).digest('base64url').slice(0, 12);
}

export function encodeCursor(offset: number, key: string): string {
  return Buffer.from(JSON.stringify({ o: offset, k: key })).toString('base64url');
}

export function decodeCursor(cursor: string, key: string, arg: string): number {
  let parsed: { o?: unknown; k?: unknown };
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new BadInputError(`${arg}: not a cursor of this connection`, arg);
  }
  if (typeof parsed?.o !== 'number' || !Number.isInteger(parsed.o) || parsed.o < 0) {
    throw new BadInputError(`${arg}: not a cursor of this connection`, arg);
  }
  if (parsed.k !== key) throw new BadInputError(`${arg}: the cursor belongs to another list or filter`, arg);
  return parsed.o;
}

/** A promise that starts its work only when someone awaits it (so unselected fields cost nothing). */
export function lazy<T>(work: () => Promise<T>): PromiseLike<T> {
  let started: Promise<T> | undefined;
  return {
    then: (onFulfilled, onRejected) => (started ??= work()).then(onFulfilled, onRejected),
  };
}

function checkSize(value: number | null | undefined, arg: string): void {
  if (value === null || value === undefined) return;
  if (!Number.isInteger(value) || value < 0 || value > MAX_WINDOW) {
    throw new BadInputError(`${arg} must be between 0 and ${MAX_WINDOW}, got ${value}`, arg);
  }
}

/** The total number of records: the page count, then the length of the last page. */
export async function totalOf<T>(source: PagedSource<T>): Promise<number> {
  const pages = await source.pageCount();
  if (pages <= 0) return 0;
  return (pages - 1) * UPSTREAM_PAGE + (await source.page(pages)).length;
}

/**
 * Resolves a Relay window: `first`/`after` fetch only the pages the window touches, concurrently;
 * `last` without `before` and `totalCount` use the page count and the last page. Nothing is fetched
 * for a part of the connection the query does not read: `edges` and `pageInfo` fetch the window,
 * `totalCount` the count; and when the window reaches the end of the list, the count is known
 * without asking.
 */
export function resolveWindow<T>(source: PagedSource<T>, args: WindowArgs): Connection<T> {
  checkSize(args.first, 'first');
  checkSize(args.last, 'last');
  const first = args.first ?? (args.last === null || args.last === undefined ? DEFAULT_WINDOW : undefined);
  const last = args.last ?? undefined;
  const lo = args.after ? decodeCursor(args.after, source.key, 'after') + 1 : 0;
  const before = args.before ? decodeCursor(args.before, source.key, 'before') : undefined;

  // A page shorter than 1000 ends the list: once the window has read one, the total is known free.
  let knownTotal: number | undefined;
  let windowStarted = false;
  const window = lazy(() => {
    windowStarted = true;
    return fetchWindow();
  });
  const total = lazy(async () => {
    // Sibling fields are resolved in the same turn of the event loop: let `edges` start first, so
    // that a window reaching the end of the list answers the count too.
    await new Promise((resolve) => setImmediate(resolve));
    if (windowStarted && last === undefined) await window;
    return knownTotal ?? totalOf(source);
  });

  async function fetchWindow() {
    let start = lo;
    let end = before ?? Infinity;
    if (first !== undefined) end = Math.min(end, start + first);
    if (last !== undefined) {
      if (end === Infinity) end = await total;
      start = Math.max(start, end - last);
    }

    const records: T[] = [];
    let lastPage: { number: number; size: number } | undefined;
    if (end > start) {
      const firstPage = Math.floor(start / UPSTREAM_PAGE) + 1;
      const lastPageNumber = Math.floor((end - 1) / UPSTREAM_PAGE) + 1;
      const numbers = Array.from({ length: lastPageNumber - firstPage + 1 }, (_, i) => firstPage + i);
      const pages = await Promise.all(numbers.map((n) => source.page(n)));
      for (let i = 0; i < pages.length; i++) {
        const pageStart = (numbers[i]! - 1) * UPSTREAM_PAGE;
        const page = pages[i]!;
        // Only the records inside the window are decoded.
        records.push(...page.slice(start - pageStart, end - pageStart));
        lastPage = { number: numbers[i]!, size: page.length };
        if (page.length < UPSTREAM_PAGE) {
          knownTotal = pageStart + page.length;
          break; // the list ends here
        }
      }
    }

    const edges = records.map((node, i) => ({ cursor: encodeCursor(start + i, source.key), node }));
    const windowFull = records.length === end - start;
    let hasNextPage: boolean | PromiseLike<boolean>;
    if (before !== undefined) hasNextPage = true; // the record of `before` follows
    else if (last !== undefined && first === undefined) hasNextPage = false; // the window ends at the end
    else if (!windowFull) hasNextPage = false;
    else if (lastPage && end < lastPage.number * UPSTREAM_PAGE) hasNextPage = lastPage.size > end - (lastPage.number - 1) * UPSTREAM_PAGE;
    else hasNextPage = lazy(async () => (await source.pageCount()) * UPSTREAM_PAGE > end);
    const pageInfo = {
      hasNextPage,
      hasPreviousPage: start > 0,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    };
    return { edges, pageInfo };
  }

  return {
    edges: lazy(async () => (await window).edges),
    pageInfo: lazy(async () => (await window).pageInfo),
    totalCount: total,
  };
}

/** A source over a list already in memory (an attendee's few reservations). */
export function memorySource<T>(key: string, load: () => Promise<T[]>): PagedSource<T> {
  let all: Promise<T[]> | undefined;
  const list = () => (all ??= load());
  return {
    key,
    pageCount: async () => Math.ceil((await list()).length / UPSTREAM_PAGE),
    page: async (n) => (await list()).slice((n - 1) * UPSTREAM_PAGE, n * UPSTREAM_PAGE),
  };
}

import { BadInputError } from '../upstream/errors.ts';
import { decodeCursor, encodeCursor, type Cursor } from './cursor.ts';
import { UPSTREAM_PAGE, type Page, type PagedSource } from './paged-source.ts';
import { seekPosition } from './seek.ts';

// The cost estimate (schema/cost.ts) reads the page size from here.
export { UPSTREAM_PAGE } from './paged-source.ts';

/**
 * Relay connections over the service's pages of 1000. A cursor (cursor.ts) is an offset into the
 * filtered list, a hash of the filter, and the sort key of its record: where the service orders the
 * list, a walk resumed after records were added or removed before the cursor finds its place by
 * that key (seek.ts) instead of trusting the offset.
 */

export const DEFAULT_WINDOW = 100;
export const MAX_WINDOW = 5000;

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
  // Cursors are read before anything is fetched, so a bad one costs no call.
  const after = args.after ? decodeCursor(args.after, source.key, 'after') : undefined;
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

  /** Where the list resumes for a cursor: by its record's key when the list is ordered, else by offset. */
  function positionOf(cursor: Cursor, side: 'after' | 'before'): number | Promise<number> {
    if (!cursor.order || !source.orderOf) return side === 'after' ? cursor.offset + 1 : cursor.offset;
    return seekPosition(source, source.orderOf, { offset: cursor.offset, order: cursor.order }, side === 'before');
  }

  async function fetchWindow() {
    const [lo, hi] = await Promise.all([after ? positionOf(after, 'after') : 0, before ? positionOf(before, 'before') : undefined]);
    let start = lo;
    let end = hi ?? Infinity;
    if (first !== undefined) end = Math.min(end, start + first);
    if (last !== undefined) {
      if (end === Infinity) end = await total;
      start = Math.max(start, end - last);
    }

    // Positions are the service's: a record that does not decode is left out of the edges, but it
    // keeps its place, so no cursor moves and the window's fullness counts it.
    const edges: { cursor: string; node: T }[] = [];
    let positionsRead = 0;
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
        const from = Math.max(start, pageStart);
        const to = Math.min(end, pageStart + page.length);
        const undecodable: number[] = [];
        for (let position = from; position < to; position++) {
          const node = page.at(position - pageStart);
          if (node == null) undecodable.push(position);
          else edges.push({ cursor: encodeCursor(source.key, position, source.orderOf?.(node)), node });
        }
        positionsRead += Math.max(0, to - from);
        reportUndecodable(source, page, undecodable);
        lastPage = { number: numbers[i]!, size: page.length };
        if (page.length < UPSTREAM_PAGE) {
          knownTotal = pageStart + page.length;
          break; // the list ends here
        }
      }
    }

    const windowFull = positionsRead === end - start;
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

/** Positions already reported per page object, so each undecodable record is reported once. */
const reported = new WeakMap<object, Set<number>>();

function reportUndecodable<T>(source: PagedSource<T>, page: Page<T>, positions: number[]): void {
  if (positions.length === 0 || !source.onUndecodable) return;
  let seen = reported.get(page);
  if (!seen) reported.set(page, (seen = new Set()));
  const fresh = positions.filter((position) => !seen.has(position));
  for (const position of fresh) seen.add(position);
  if (fresh.length > 0) source.onUndecodable(fresh);
}

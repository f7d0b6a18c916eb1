import { BadInputError } from '../upstream/errors.ts';
import { type Cursor, decodeCursor, encodeCursor } from './cursor.ts';
import { type Page, type PagedSource, UPSTREAM_PAGE } from './paged-source.ts';
import { resumePosition } from './seek.ts';
import { streamWindow } from './streamed-window.ts';
import { type PositionedRecord, pageOf, readStretch } from './stretch.ts';

// The cost estimate's rules (schema/cost.ts) read the page size and the most pages a seek reads from here.
export { UPSTREAM_PAGE } from './paged-source.ts';
export { MAX_SEEK_PAGES } from './seek.ts';

/**
 * Relay connections over the service's pages of 1000. A cursor (cursor.ts) is an offset into the
 * filtered list, a hash of the filter, and the sort key of its record: where the service orders the
 * list, a walk resumed after records were added or removed before the cursor finds its place by
 * that key (seek.ts) instead of trusting the offset. The cursor of a page's last record also
 * carries the key of the record after it when that is known, so that resuming there needs no read
 * of the page before.
 */

export const DEFAULT_WINDOW = 100;
export const MAX_WINDOW = 5000;
/**
 * `first` when the edges are streamed (`edges @stream`): they are handed over page by page and
 * not held whole, so the bound is on upstream calls instead: 100 pages, within the default
 * QUERY_MAX_UPSTREAM_CALLS (120), which is the limit an operator tunes and still applies.
 */
export const MAX_STREAMED_WINDOW = 100_000;

export interface WindowArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** A promise only for a window's last record, which waits to learn whether the page after it is read. */
type CursorValue = string | PromiseLike<string>;

export interface WindowOptions {
  /** The client streams the edges (`edges @stream`): a forward window then streams them page by page. */
  streamed?: boolean;
}

type Edge<T> = { cursor: CursorValue; node: T };

export interface Connection<T, Edges = PromiseLike<Edge<T>[]>> {
  edges: Edges;
  pageInfo: PromiseLike<{
    hasNextPage: boolean | PromiseLike<boolean>;
    hasPreviousPage: boolean;
    startCursor: CursorValue | null;
    endCursor: CursorValue | null;
  }>;
  /** Computed only when a client reads it: page count plus the last page, unless the window saw the end. */
  totalCount: PromiseLike<number>;
}

/** A connection whose edges may be streamed (a forward window with `edges @stream`): an async iterable then. */
export type StreamableConnection<T> = Connection<T, PromiseLike<Edge<T>[]> | AsyncIterable<Edge<T>>>;

/** A promise that starts its work only when someone awaits it (so unselected fields cost nothing). */
export function lazy<T>(work: () => Promise<T>): PromiseLike<T> {
  let started: Promise<T> | undefined;
  return {
    then: (onFulfilled, onRejected) => (started ??= work()).then(onFulfilled, onRejected),
  };
}

/**
 * Resolves once the sibling fields of the current selection have been asked for: GraphQL resolves
 * them all in one turn of the event loop, so by the next one each has started its work or never will.
 */
function afterSiblingFields(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function checkSize(value: number | null | undefined, arg: string, max = MAX_WINDOW): void {
  if (value === null || value === undefined) return;
  if (!Number.isInteger(value) || value < 0 || value > max) {
    const streamedToo =
      max === MAX_WINDOW && arg === 'first'
        ? ` (up to ${MAX_STREAMED_WINDOW} when its edges are selected with @stream)`
        : '';
    throw new BadInputError(`${arg} must be between 0 and ${max}${streamedToo}, got ${value}`, arg);
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
 * without asking. A window ending on a page boundary answers `hasNextPage` from the page after it.
 */
export function resolveWindow<T>(source: PagedSource<T>, args: WindowArgs): Connection<T>;
export function resolveWindow<T>(
  source: PagedSource<T>,
  args: WindowArgs,
  options: WindowOptions,
): StreamableConnection<T>;
export function resolveWindow<T>(
  source: PagedSource<T>,
  args: WindowArgs,
  options: WindowOptions = {},
): StreamableConnection<T> {
  // Only a forward window streams: `last` and `before` place the window from its end.
  const streamed = options.streamed === true && args.last == null && args.before == null && args.first != null;
  checkSize(args.first, 'first', streamed ? MAX_STREAMED_WINDOW : MAX_WINDOW);
  checkSize(args.last, 'last');
  const first = args.first ?? (args.last === null || args.last === undefined ? DEFAULT_WINDOW : undefined);
  const last = args.last ?? undefined;
  // Cursors are read before anything is fetched, so a bad one costs no call.
  const after = args.after ? decodeCursor(args.after, source, 'after') : undefined;
  const before = args.before ? decodeCursor(args.before, source, 'before') : undefined;

  // A page shorter than 1000 ends the list: once the window has read one, the total is known free.
  let knownTotal: number | undefined;
  let windowStarted = false;
  const window = lazy(() => {
    windowStarted = true;
    return fetchWindow();
  });
  const total = lazy(async () => {
    // Let `edges` start first, so that a window reaching the end of the list answers the count too.
    await afterSiblingFields();
    if (windowStarted && last === undefined) await window;
    return knownTotal ?? totalOf(source);
  });

  /** Where the list resumes for a cursor: by its record's key when the list is ordered, else by offset. */
  function positionOf(cursor: Cursor, side: 'after' | 'before'): number | Promise<number> {
    const { order } = cursor;
    if (!order || !source.orderOf) return side === 'after' ? cursor.offset + 1 : cursor.offset;
    return resumePosition(source, source.orderOf, { ...cursor, order }, side);
  }

  async function fetchWindow() {
    const [lo, hi] = await Promise.all([
      after ? positionOf(after, 'after') : 0,
      before ? positionOf(before, 'before') : undefined,
    ]);
    let start = lo;
    let end = hi ?? Infinity;
    if (first !== undefined) end = Math.min(end, start + first);
    if (last !== undefined) {
      if (end === Infinity) end = await total;
      start = Math.max(start, end - last);
    }

    const stretch = await readStretch(source, start, end);
    knownTotal ??= stretch.total;
    let hasNextPage: boolean | PromiseLike<boolean>;
    // The page holding position `end`, when the window's own pages do not: read only if `hasNextPage` is asked.
    const following = pageOf(end);
    let mayReadAhead = false;
    // The page after the window, once read (by `hasNextPage`): in an object of its own, which the read-ahead keeps (readAheadLater).
    const ahead: ReadingAhead<T> = {};
    if (before !== undefined)
      hasNextPage = true; // the record of `before` follows
    else if (last !== undefined && first === undefined)
      hasNextPage = false; // the window ends at the end
    else if (stretch.positions < end - start)
      hasNextPage = false; // a short page ended the list
    else if (stretch.pages.has(following)) hasNextPage = stretch.pages.get(following)!.length > end % UPSTREAM_PAGE;
    else {
      // The window ends where a page does (or is empty): the page after it answers for the one call
      // the page count would cost, and tells the key of the record that follows, which the end
      // cursor then carries so that the next window need not read this window's last page again.
      mayReadAhead = true;
      hasNextPage = lazy(async () => (await (ahead.page ??= source.page(following))).length > end % UPSTREAM_PAGE);
    }

    const edges: Edge<T>[] = stretch.records.map((record) => new LazyEdge(source, stretch.pages, record));
    const lastRecord = stretch.records.at(-1);
    if (mayReadAhead && lastRecord && lastRecord.position === end - 1) {
      // The record after it is on the page after the window: known only if `hasNextPage` reads it.
      edges[edges.length - 1]!.cursor = lazy(async () => {
        await afterSiblingFields();
        const page = await ahead.page?.catch(() => undefined); // a failed read-ahead fails hasNextPage, not the cursor
        return cursorOf(source, page ? new Map([...stretch.pages, [following, page]]) : stretch.pages, lastRecord);
      });
    }
    if (mayReadAhead && after !== undefined && last === undefined && end > start && source.readAhead) {
      // A forward walk's next window starts on the page after this one: read it ahead, in the
      // background, without delaying this answer. A walk is recognised by its `after`: a window from
      // the start of the list (a first screen, read again and again) spends no call on a next page
      // nobody may ask for. When `hasNextPage` reads it for this operation,
      // the page after that (if this one is full) is the next window's `hasNextPage`. Each page is
      // still read once: the next window finds it kept, or joins the read in flight.
      readAheadLater(ahead, following, source.readAhead.bind(source));
    }
    const pageInfo = {
      hasNextPage,
      hasPreviousPage: start > 0,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    };
    return { edges, pageInfo };
  }

  return {
    edges: streamed
      ? streamWindow(
          source,
          after ? positionOf(after, 'after') : 0,
          first!,
          (pages, record): Edge<T> => new LazyEdge(source, pages, record),
        )
      : lazy(async () => (await window).edges),
    pageInfo: lazy(async () => (await window).pageInfo),
    totalCount: total,
  };
}

interface ReadingAhead<T> {
  page?: Promise<Page<T>>;
}

/**
 * Reads the page after a window ahead once its sibling fields have started. A function of its own:
 * a closure in the window's scope would keep the window's context, and through it its records and
 * edges, until the read-ahead ends, which under load is after the answer has gone (at 50 S4b
 * connections, 23 windows of 1000 were held so, docs/benchmarks.md).
 */
function readAheadLater<T>(ahead: ReadingAhead<T>, following: number, readAhead: (n: number) => void): void {
  void afterSiblingFields().then(async () => {
    if (!ahead.page) return readAhead(following);
    const page = await ahead.page.catch(() => undefined);
    if (page?.length === UPSTREAM_PAGE) readAhead(following + 1);
  });
}

/**
 * An edge whose cursor is encoded when it is read: a page of 1000 edges whose cursors are not
 * selected encodes none (encoding one per edge was about a twentieth of a fresh page's CPU). A
 * cursor set on it (a window's last, which may wait for the page after) replaces the encoded one.
 */
class LazyEdge<T> implements Edge<T> {
  readonly node: T;
  #cursor: CursorValue | undefined;
  constructor(
    private readonly source: PagedSource<T>,
    private readonly pages: ReadonlyMap<number, Page<T>>,
    private readonly record: PositionedRecord<T>,
  ) {
    this.node = record.node;
  }
  get cursor(): CursorValue {
    return (this.#cursor ??= cursorOf(this.source, this.pages, this.record));
  }
  set cursor(value: CursorValue) {
    this.#cursor = value;
  }
}

/**
 * A record's cursor. The last record of a page also carries the key of the record after it when
 * the page holding that one was read: resuming there then checks its place on the page the next
 * window reads anyway (seek.ts).
 */
function cursorOf<T>(
  source: PagedSource<T>,
  pages: ReadonlyMap<number, Page<T>>,
  { position, node }: PositionedRecord<T>,
): string {
  const order = source.orderOf?.(node);
  const following = position + 1;
  const record = order && following % UPSTREAM_PAGE === 0 ? pages.get(pageOf(following))?.at(0) : null;
  return encodeCursor(source, position, order, record == null ? null : source.orderOf?.(record));
}

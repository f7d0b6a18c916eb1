import { type Page, type PagedSource, UPSTREAM_PAGE } from './paged-source.ts';

/**
 * A stretch of positions of a paged list, read for a connection window (paging.ts): the pages that
 * hold it, fetched concurrently, and the records on them that decode.
 */

/** The 1-based number of the upstream page that holds a position of the list. */
export const pageOf = (position: number) => Math.floor(position / UPSTREAM_PAGE) + 1;

export interface PositionedRecord<T> {
  position: number;
  node: T;
}

/** What a window read: its records, the pages that hold them, and how the list ended if it did. */
export interface Stretch<T> {
  records: PositionedRecord<T>[];
  pages: Map<number, Page<T>>;
  /** Positions read, undecodable ones included: fewer than asked when the list ends inside the window. */
  positions: number;
  /** Known when a page shorter than 1000 ended the list. */
  total?: number;
}

/** Reads the pages of positions [start, end) concurrently and decodes only the records inside. */
export async function readStretch<T>(source: PagedSource<T>, start: number, end: number): Promise<Stretch<T>> {
  const stretch: Stretch<T> = { records: [], pages: new Map(), positions: 0 };
  if (end <= start) return stretch;
  const firstPage = pageOf(start);
  const numbers = Array.from({ length: pageOf(end - 1) - firstPage + 1 }, (_, i) => firstPage + i);
  const pages = await Promise.all(numbers.map((n) => source.page(n)));
  for (const [i, page] of pages.entries()) {
    const pageStart = (numbers[i]! - 1) * UPSTREAM_PAGE;
    stretch.pages.set(numbers[i]!, page);
    // Positions are the service's: a record that does not decode is left out of the edges, but it
    // keeps its place, so no cursor moves and the window's fullness counts it.
    const from = Math.max(start, pageStart);
    const to = Math.min(end, pageStart + page.length);
    const undecodable: number[] = [];
    for (let position = from; position < to; position++) {
      const node = page.at(position - pageStart);
      if (node == null) undecodable.push(position);
      else stretch.records.push({ position, node });
    }
    stretch.positions += Math.max(0, to - from);
    reportUndecodable(source, page, undecodable);
    if (page.length < UPSTREAM_PAGE) {
      stretch.total = pageStart + page.length;
      break; // the list ends here
    }
  }
  return stretch;
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

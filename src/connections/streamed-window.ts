import { type Page, type PagedSource, UPSTREAM_PAGE } from './paged-source.ts';
import { type PositionedRecord, pageOf } from './stretch.ts';

/**
 * The edges of a forward window (`first`, `after`) handed over page by page, for `edges @stream`
 * (docs/architecture.md, "Large lists"): the first records go out as soon as their page is read,
 * while the page after it is on its way; a page is let go once its records are sent, so a walk of
 * 25 pages holds two at a time, not 25. When the client goes away the executor ends the iteration
 * and no further page is read.
 */
export async function* streamWindow<T, Edge>(
  source: PagedSource<T>,
  from: number | PromiseLike<number>,
  count: number,
  edgeOf: (page: ReadonlyMap<number, Page<T>>, record: PositionedRecord<T>) => Edge,
): AsyncGenerator<Edge, void, undefined> {
  const start = await from;
  const end = start + count;
  if (end <= start) return;
  let number = pageOf(start);
  let reading: Promise<Page<T>> | undefined = source.page(number);
  while (reading) {
    const page: Page<T> = await reading;
    const pageStart = (number - 1) * UPSTREAM_PAGE;
    const endsHere = page.length < UPSTREAM_PAGE || pageStart + UPSTREAM_PAGE >= end;
    reading = endsHere ? undefined : source.page(++number);
    // Awaited on the next turn; until then a failure must not count as unhandled if the client left.
    reading?.catch(() => undefined);
    const pages = new Map([[pageOf(pageStart), page]]);
    const undecodable: number[] = [];
    for (let position = Math.max(start, pageStart); position < Math.min(end, pageStart + page.length); position++) {
      const node = page.at(position - pageStart);
      if (node == null) undecodable.push(position);
      else yield edgeOf(pages, { position, node });
    }
    if (undecodable.length > 0) source.onUndecodable?.(undecodable);
  }
}

import { UPSTREAM_PAGE, type PagedSource } from './paged-source.ts';

/** Lexicographic order of sort keys (reservation number, then question). */
export function compareOrder(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return a.length - b.length;
}

/**
 * A re-seek reads the page of the cursor's offset and at most one page on either side: enough for
 * the few records added or removed between two page requests. A list that changed by more than a
 * page between them resumes at the nearest page boundary.
 */
const MAX_SEEK_PAGES = 3;

/**
 * Where a walk resumes in a list sorted by `orderOf`: the position of the first record whose key is
 * greater than `order` (`inclusive`: not less). An offset alone skips a record when one before it
 * is removed and repeats one when a record is added before it; the key finds the place again.
 * It starts with the page of `offset`, which the window reads anyway, so an unchanged list costs
 * no call more (except across a page boundary, where the page before is read to see the record).
 */
export async function seekPosition<T>(
  source: PagedSource<T>,
  orderOf: (record: T) => readonly number[] | null,
  { offset, order }: { offset: number; order: readonly number[] },
  inclusive: boolean,
): Promise<number> {
  const follows = (key: readonly number[]) => (inclusive ? compareOrder(key, order) >= 0 : compareOrder(key, order) > 0);
  let pageNumber = Math.floor(offset / UPSTREAM_PAGE) + 1;
  let direction: -1 | 0 | 1 = 0;
  for (let read = 1; ; read++) {
    const page = await source.page(pageNumber);
    const pageStart = (pageNumber - 1) * UPSTREAM_PAGE;
    let firstFollowing = -1;
    let anyPreceding = false;
    for (let i = 0; i < page.length; i++) {
      const record = page.at(i);
      const key = record == null ? null : orderOf(record);
      if (key === null) continue; // undecodable or unkeyed: shown nowhere, no help in placing
      if (follows(key)) {
        firstFollowing = i;
        break;
      }
      anyPreceding = true;
    }
    const more = read < MAX_SEEK_PAGES;
    if (!anyPreceding && pageNumber > 1 && direction !== 1 && more) {
      // Everything here follows (or the page is past the end): the place is on an earlier page.
      direction = -1;
      pageNumber--;
    } else if (firstFollowing >= 0) {
      return pageStart + firstFollowing;
    } else if (page.length === UPSTREAM_PAGE && direction !== -1 && more) {
      direction = 1;
      pageNumber++;
    } else {
      return pageStart + page.length;
    }
  }
}

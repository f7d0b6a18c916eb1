import type { Cursor } from './cursor.ts';
import { type PagedSource, UPSTREAM_PAGE } from './paged-source.ts';

/** Lexicographic order of sort keys (reservation number, then question). */
export function compareOrder(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  }
  return a.length - b.length;
}

type OrderOf<T> = (record: T) => readonly number[] | null;

/**
 * Where a window resumes for a cursor that carries its record's sort key: after it (`after`) or
 * at it (`before`). A cursor on the last record of a page that also carries the key of the record
 * that followed is checked on the next page, which the window reads anyway; any other is placed by
 * `seekPosition`, which starts on the cursor's own page.
 */
export async function resumePosition<T>(
  source: PagedSource<T>,
  orderOf: OrderOf<T>,
  cursor: Cursor & { order: readonly number[] },
  side: 'after' | 'before',
): Promise<number> {
  if (side === 'after' && (await successorStayed(source, orderOf, cursor))) return cursor.offset + 1;
  return seekPosition(source, orderOf, cursor, side === 'before');
}

/**
 * Whether the record that followed the cursor's record when the cursor was made is still at the
 * next offset. Then the records before that offset are exactly those sorted before it, which the
 * walk has passed: resuming there neither skips nor repeats a record that stayed in the list. (A
 * record that joined between the two keys while as many others left before the cursor is not
 * seen: only the cursor's page could tell, and reading it is what this check saves. One that joined
 * there alone moves the next record, and the seek finds it.) Inside a page the cursor's own page is
 * the window's first, so a seek there is free and exact: this is only for a page's last record.
 */
async function successorStayed<T>(
  source: PagedSource<T>,
  orderOf: OrderOf<T>,
  { offset, order, next }: Cursor & { order: readonly number[] },
): Promise<boolean> {
  const following = offset + 1;
  if (!next || following % UPSTREAM_PAGE !== 0 || compareOrder(next, order) <= 0) return false;
  const record = (await source.page(following / UPSTREAM_PAGE + 1)).at(0);
  const key = record == null ? null : orderOf(record);
  return key !== null && compareOrder(key, next) === 0;
}

/**
 * A re-seek reads the page of the cursor's offset and, going one way, at most two more: enough for
 * the few records added or removed between two page requests. A list that changed by more than
 * that between them resumes at the nearest page boundary. The cost estimate counts these reads.
 */
export const MAX_SEEK_PAGES = 3;

/**
 * Where a walk resumes in a list sorted by `orderOf`: the position of the first record whose key is
 * greater than `order` (`inclusive`: not less). An offset alone skips a record when one before it
 * is removed and repeats one when a record is added before it; the key finds the place again.
 * It starts with the page of `offset`, which the window reads anyway, so an unchanged list costs
 * no call more (except across a page boundary, where the page before is read to see the record).
 */
export async function seekPosition<T>(
  source: PagedSource<T>,
  orderOf: OrderOf<T>,
  { offset, order }: { offset: number; order: readonly number[] },
  inclusive: boolean,
): Promise<number> {
  const follows = (key: readonly number[]) =>
    inclusive ? compareOrder(key, order) >= 0 : compareOrder(key, order) > 0;
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

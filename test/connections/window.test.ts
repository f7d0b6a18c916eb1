import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/connections/cursor.ts';
import { type PagedSource, UPSTREAM_PAGE } from '../../src/connections/paged-source.ts';
import { resolveWindow, type WindowArgs } from '../../src/connections/window.ts';
import { LazyList } from '../../src/upstream/lazy-list.ts';

/** What the test list is and whose: cursors carry both. */
const TEST_LIST = { key: 'test-list', licensee: '1001' };

interface Row {
  reservationNumber: number;
}

/**
 * A list the service orders by reservation number, served in pages of 1000 as LazyLists: a raw
 * record without a number does not decode. `rows` may change between two windows, as upstream.
 */
function orderedSource(rows: unknown[], reads: number[] = []) {
  const undecodable: number[][] = [];
  const source: PagedSource<Row> = {
    ...TEST_LIST,
    pageCount: async () => Math.ceil(rows.length / UPSTREAM_PAGE),
    page: async (n) => {
      reads.push(n);
      const raw = rows.slice((n - 1) * UPSTREAM_PAGE, n * UPSTREAM_PAGE);
      return LazyList.of(raw, (value) => {
        const number = (value as { reservationNumber?: unknown }).reservationNumber;
        return typeof number === 'number' ? { reservationNumber: number } : null;
      });
    },
    orderOf: (row) => [row.reservationNumber],
    onUndecodable: (positions) => undecodable.push(positions),
  };
  return { source, undecodable };
}

const numbered = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ reservationNumber: from + i }));

/**
 * Reads a window as GraphQL does: every selected field is asked for in the same turn, after which
 * the values are awaited. `hasNextPage` is selected unless told otherwise.
 */
async function read(source: PagedSource<Row>, args: WindowArgs, { hasNextPage: selectHasNextPage = true } = {}) {
  const connection = resolveWindow(source, args);
  const [edges, pageInfo] = await Promise.all([connection.edges, connection.pageInfo]);
  const [cursors, hasNextPage, startCursor, endCursor] = await Promise.all([
    Promise.all(edges.map((e) => e.cursor)),
    selectHasNextPage ? pageInfo.hasNextPage : undefined,
    pageInfo.startCursor,
    pageInfo.endCursor,
  ]);
  return {
    numbers: edges.map((e) => e.node.reservationNumber),
    cursors,
    pageInfo: { hasPreviousPage: pageInfo.hasPreviousPage, hasNextPage, startCursor, endCursor },
  };
}

/** The pages a step read, each once (the request's calls (resolvers/request-calls.ts) make one call per page). */
const pagesOf = (reads: number[]) => [...new Set(reads)].sort((a, b) => a - b);

describe('a record that does not decode (fault: it shortened the window, shifted cursors and ended paging)', () => {
  // 2,500 reservations; the third one lacks its number.
  const rows: unknown[] = numbered(700_001, 2500);
  rows[2] = { status: 'new' };

  it('first: 10 skips it but keeps every other record at its own position, and the list goes on', async () => {
    const { source, undecodable } = orderedSource(rows);
    const page = await read(source, { first: 10 });
    expect(page.numbers).toEqual([700_001, 700_002, 700_004, 700_005, 700_006, 700_007, 700_008, 700_009, 700_010]);
    expect(page.pageInfo.hasNextPage).toBe(true);
    expect(page.pageInfo.endCursor).toBe(encodeCursor(TEST_LIST, 9, [700_010]));
    expect(undecodable).toEqual([[2]]);

    const next = await read(source, { first: 3, after: page.pageInfo.endCursor });
    expect(next.numbers).toEqual([700_011, 700_012, 700_013]);
  });

  it('is reported once when several windows of one request read its page', async () => {
    const { source, undecodable } = orderedSource(rows);
    // The request's loaders answer the same page object to every window that asks for it.
    const pages = new Map<number, ReturnType<typeof source.page>>();
    const perRequest: PagedSource<Row> = {
      ...source,
      page: (n) => pages.get(n) ?? pages.set(n, source.page(n)).get(n)!,
    };
    await read(perRequest, { first: 5 });
    await read(perRequest, { first: 8 });
    expect(undecodable).toEqual([[2]]);
  });

  it('walking the whole list visits every decodable record once', async () => {
    const { source } = orderedSource(rows);
    const seen: number[] = [];
    let after: string | null = null;
    for (let step = 0; step < 10; step++) {
      const page = await read(source, { first: 700, after });
      seen.push(...page.numbers);
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual(
      numbered(700_001, 2500)
        .map((r) => r.reservationNumber)
        .filter((n) => n !== 700_003),
    );
  });
});

describe('resuming after the list changed (fault: offset cursors skipped or repeated records)', () => {
  it('a record removed before the cursor skips nothing', async () => {
    const rows: unknown[] = numbered(1, 50);
    const { source } = orderedSource(rows);
    const page = await read(source, { first: 10 });
    rows.splice(3, 2); // reservations 4 and 5 leave the filtered list
    const next = await read(source, { first: 5, after: page.pageInfo.endCursor });
    expect(next.numbers).toEqual([11, 12, 13, 14, 15]);
  });

  it('a record added before the cursor repeats nothing', async () => {
    const rows: unknown[] = numbered(10, 50).filter((r) => r.reservationNumber !== 12);
    const { source } = orderedSource(rows);
    const page = await read(source, { first: 10 });
    expect(page.numbers.at(-1)).toBe(20);
    rows.splice(2, 0, { reservationNumber: 12 }); // 12 joins the filtered list, before the cursor
    const next = await read(source, { first: 3, after: page.pageInfo.endCursor });
    expect(next.numbers).toEqual([21, 22, 23]);
  });

  it('the record of the cursor itself removed: resumes at the next number', async () => {
    const rows: unknown[] = numbered(1, 50);
    const { source } = orderedSource(rows);
    const page = await read(source, { first: 10 });
    rows.splice(9, 1);
    expect((await read(source, { first: 2, after: page.pageInfo.endCursor })).numbers).toEqual([11, 12]);
  });

  it('across a page boundary, a cursor without the next key: the page before is read to find the place', async () => {
    const rows: unknown[] = numbered(1, 2500);
    const reads: number[] = [];
    const { source } = orderedSource(rows, reads);
    // The cursor of reservation 1000 as issued before cursors carried the next key.
    const cursor = encodeCursor(TEST_LIST, 999, [1000]);
    expect((await read(source, { first: 2, after: cursor })).numbers).toEqual([1001, 1002]);
    expect(pagesOf(reads)).toEqual([1, 2]);
    rows.splice(10, 3); // reservation 1001 moves to position 997, on the page before the cursor's
    expect((await read(source, { first: 2, after: cursor })).numbers).toEqual([1001, 1002]);
    rows.splice(0, 0, ...numbered(-20, 20)); // and now to position 1017, on the page after
    expect((await read(source, { first: 2, after: cursor })).numbers).toEqual([1001, 1002]);
  });

  it('before: a window ending at a cursor ends just before its record after records were added', async () => {
    const rows: unknown[] = numbered(1, 50).filter((r) => r.reservationNumber % 2 === 1);
    const { source } = orderedSource(rows);
    const page = await read(source, { first: 10 });
    const cursorOf19 = page.cursors[9]!;
    rows.splice(0, 0, { reservationNumber: 0 });
    rows.splice(5, 0, { reservationNumber: 8 });
    const back = await read(source, { last: 3, before: cursorOf19 });
    expect(back.numbers).toEqual([13, 15, 17]);
  });

  it('a before cursor resumes by its own key, whatever next key it carries', async () => {
    const rows: unknown[] = numbered(1, 2500);
    const { source } = orderedSource(rows);
    const end = (await read(source, { first: 1000 })).pageInfo.endCursor!;
    rows.splice(0, 0, ...numbered(-4, 5)); // five records join before reservation 1000
    expect((await read(source, { last: 3, before: end })).numbers).toEqual([997, 998, 999]);
  });

  it('still takes an offset-only cursor (issued before cursors carried the number)', async () => {
    const { source } = orderedSource(numbered(1, 50));
    const old = Buffer.from(JSON.stringify({ o: 4, k: 'test-list', l: '1001' })).toString('base64url');
    expect((await read(source, { first: 2, after: old })).numbers).toEqual([6, 7]);
  });

  it('refuses a cursor whose number is not a list of integers', async () => {
    const { source } = orderedSource(numbered(1, 50));
    const forged = Buffer.from(JSON.stringify({ o: 4, k: 'test-list', l: '1001', n: ['x'] })).toString('base64url');
    expect(() => resolveWindow(source, { first: 2, after: forged })).toThrow('after: not a cursor of this connection');
  });
});

// Fault: every window ending on a page boundary cost two calls more than its pages: the page count
// for hasNextPage, and, on the next request, the page before to check the cursor's record (a walk
// of 26 pages made 76 upstream calls instead of 51).
describe('a window ending on a page boundary', () => {
  it('reads the next page for hasNextPage instead of the page count, and its end cursor carries the next key', async () => {
    const reads: number[] = [];
    const { source } = orderedSource(numbered(1, 2500), reads);
    let pageCounts = 0;
    const counted: PagedSource<Row> = { ...source, pageCount: async () => (pageCounts++, source.pageCount()) };
    const page = await read(counted, { first: 1000 });
    expect(page.pageInfo.hasNextPage).toBe(true);
    expect(pageCounts).toBe(0);
    expect(pagesOf(reads)).toEqual([1, 2]);
    expect(page.pageInfo.endCursor).toBe(encodeCursor(TEST_LIST, 999, [1000], [1001]));
    expect(page.cursors.at(-1)).toBe(page.pageInfo.endCursor);
    // The list's last, short page: no read-ahead; an exact multiple of 1000: one read of an empty page.
    expect(
      (await read(counted, { first: 500, after: encodeCursor(TEST_LIST, 1999, [2000]) })).pageInfo.hasNextPage,
    ).toBe(false);
    const exact = orderedSource(numbered(1, 2000));
    expect(
      (await read(exact.source, { first: 1000, after: (await read(exact.source, { first: 1000 })).pageInfo.endCursor }))
        .pageInfo.hasNextPage,
    ).toBe(false);
    expect(pageCounts).toBe(0);
  });

  it('walking first: 1000 reads each page once per window that shows it and once ahead, never the page before', async () => {
    const reads: number[] = [];
    const { source } = orderedSource(numbered(1, 3500), reads);
    const steps: number[][] = [];
    const seen: number[] = [];
    let after: string | null = null;
    for (let step = 0; step < 10; step++) {
      reads.length = 0;
      const page = await read(source, { first: 1000, after });
      steps.push(pagesOf(reads));
      seen.push(...page.numbers);
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(seen).toEqual(numbered(1, 3500).map((r) => r.reservationNumber));
    expect(steps).toEqual([[1, 2], [2, 3], [3, 4], [4]]);
  });

  it('without hasNextPage selected, reads no page ahead; its cursor then costs the page before on resuming', async () => {
    const reads: number[] = [];
    const { source } = orderedSource(numbered(1, 2500), reads);
    const page = await read(source, { first: 1000 }, { hasNextPage: false });
    expect(pagesOf(reads)).toEqual([1]);
    expect(page.pageInfo.endCursor).toBe(encodeCursor(TEST_LIST, 999, [1000]));
    reads.length = 0;
    expect((await read(source, { first: 3, after: page.pageInfo.endCursor })).numbers).toEqual([1001, 1002, 1003]);
    expect(pagesOf(reads)).toEqual([1, 2]);
  });

  it('a page-end record inside the window carries the next key too, read free from the window', async () => {
    const reads: number[] = [];
    const { source } = orderedSource(numbered(1, 2500), reads);
    const page = await read(source, { first: 1500 });
    expect(page.cursors[999]).toBe(encodeCursor(TEST_LIST, 999, [1000], [1001]));
    expect(page.cursors[998]).toBe(encodeCursor(TEST_LIST, 998, [999]));
    reads.length = 0;
    expect((await read(source, { first: 2, after: page.cursors[999] })).numbers).toEqual([1001, 1002]);
    expect(pagesOf(reads)).toEqual([2]);
  });

  it('a failed read-ahead fails hasNextPage only: the end cursor comes without the next key', async () => {
    const { source } = orderedSource(numbered(1, 2500));
    const failing: PagedSource<Row> = {
      ...source,
      page: (n) => (n === 2 ? Promise.reject(new Error('upstream down')) : source.page(n)),
    };
    const connection = resolveWindow(failing, { first: 1000 });
    const pageInfo = await connection.pageInfo;
    const [hasNextPage, endCursor] = await Promise.allSettled([pageInfo.hasNextPage, pageInfo.endCursor]);
    expect(hasNextPage).toMatchObject({ status: 'rejected' });
    expect(endCursor).toEqual({ status: 'fulfilled', value: encodeCursor(TEST_LIST, 999, [1000]) });
  });
});

describe('resuming at a page boundary by the next key, after the list changed', () => {
  /** 2,500 reservations numbered by tens, and the end cursor of their first 1000 (on 10,000, next 10,010). */
  async function boundary() {
    const rows: unknown[] = numbered(1, 2500).map((r) => ({ reservationNumber: r.reservationNumber * 10 }));
    const reads: number[] = [];
    const { source } = orderedSource(rows, reads);
    const cursor = (await read(source, { first: 1000 })).pageInfo.endCursor!;
    expect(cursor).toBe(encodeCursor(TEST_LIST, 999, [10_000], [10_010]));
    reads.length = 0;
    return { rows, reads, resume: async (first = 3) => (await read(source, { first, after: cursor })).numbers };
  }

  it('unchanged: resumes on the next page without reading the cursor’s page', async () => {
    const { reads, resume } = await boundary();
    expect(await resume()).toEqual([10_010, 10_020, 10_030]);
    expect(pagesOf(reads)).toEqual([2]);
  });

  it('a record removed before the cursor skips nothing', async () => {
    const { rows, reads, resume } = await boundary();
    rows.splice(5, 1);
    expect(await resume()).toEqual([10_010, 10_020, 10_030]);
    expect(pagesOf(reads)).toEqual([1, 2]); // the next record moved: its key is looked for
  });

  it('a record added before the cursor repeats nothing', async () => {
    const { rows, resume } = await boundary();
    rows.splice(5, 0, { reservationNumber: 55 });
    expect(await resume()).toEqual([10_010, 10_020, 10_030]);
  });

  it('a record joining between the cursor’s key and the next one is seen', async () => {
    const { rows, resume } = await boundary();
    rows.splice(1000, 0, { reservationNumber: 10_005 });
    expect(await resume()).toEqual([10_005, 10_010, 10_020]);
  });

  it('the record after the cursor removed: resumes at the one after it', async () => {
    const { rows, resume } = await boundary();
    rows.splice(1000, 1);
    expect(await resume()).toEqual([10_020, 10_030, 10_040]);
  });

  it('the cursor’s own record removed and one added before it: the next record stayed, resumes there', async () => {
    const { rows, reads, resume } = await boundary();
    rows.splice(999, 1);
    rows.splice(0, 0, { reservationNumber: 5 });
    expect(await resume()).toEqual([10_010, 10_020, 10_030]);
    expect(pagesOf(reads)).toEqual([2]);
  });

  it('many records added before the cursor: found again pages later', async () => {
    const { rows, resume } = await boundary();
    rows.splice(0, 0, ...numbered(1, 1200));
    expect(await resume()).toEqual([10_010, 10_020, 10_030]);
  });

  it('a next key that does not follow the cursor’s own (a forged cursor) is not trusted', async () => {
    const { source } = orderedSource(numbered(1, 2500));
    const forged = encodeCursor(TEST_LIST, 999, [1000], [1000]);
    expect((await read(source, { first: 2, after: forged })).numbers).toEqual([1001, 1002]);
  });

  it('refuses a cursor whose next key is not a list of integers, or comes without its own key', () => {
    const { source } = orderedSource(numbered(1, 50));
    for (const json of [
      { o: 4, k: 'test-list', l: '1001', n: [5], x: 'x' },
      { o: 4, k: 'test-list', l: '1001', x: [6] },
    ]) {
      const forged = Buffer.from(JSON.stringify(json)).toString('base64url');
      expect(() => resolveWindow(source, { first: 2, after: forged })).toThrow(
        'after: not a cursor of this connection',
      );
    }
  });
});

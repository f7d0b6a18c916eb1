import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/resolvers/cursor.ts';
import { UPSTREAM_PAGE, type PagedSource } from '../../src/resolvers/paged-source.ts';
import { resolveWindow, type WindowArgs } from '../../src/resolvers/paging.ts';
import { LazyList } from '../../src/upstream/lazy-list.ts';

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
    key: 'test-list',
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

const numbered = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ reservationNumber: from + i }));

async function read(source: PagedSource<Row>, args: WindowArgs) {
  const connection = resolveWindow(source, args);
  const edges = await connection.edges;
  const pageInfo = await connection.pageInfo;
  return { numbers: edges.map((e) => e.node.reservationNumber), cursors: edges.map((e) => e.cursor), pageInfo: { ...pageInfo, hasNextPage: await pageInfo.hasNextPage } };
}

describe('a record that does not decode (fault: it shortened the window, shifted cursors and ended paging)', () => {
  // 2,500 reservations; the third one lacks its number.
  const rows: unknown[] = numbered(700_001, 2500);
  rows[2] = { status: 'new' };

  it('first: 10 skips it but keeps every other record at its own position, and the list goes on', async () => {
    const { source, undecodable } = orderedSource(rows);
    const page = await read(source, { first: 10 });
    expect(page.numbers).toEqual([700_001, 700_002, 700_004, 700_005, 700_006, 700_007, 700_008, 700_009, 700_010]);
    expect(page.pageInfo.hasNextPage).toBe(true);
    expect(page.pageInfo.endCursor).toBe(encodeCursor('test-list', 9, [700_010]));
    expect(undecodable).toEqual([[2]]);

    const next = await read(source, { first: 3, after: page.pageInfo.endCursor });
    expect(next.numbers).toEqual([700_011, 700_012, 700_013]);
  });

  it('is reported once when several windows of one request read its page', async () => {
    const { source, undecodable } = orderedSource(rows);
    // The request's loaders answer the same page object to every window that asks for it.
    const pages = new Map<number, ReturnType<typeof source.page>>();
    const perRequest: PagedSource<Row> = { ...source, page: (n) => pages.get(n) ?? pages.set(n, source.page(n)).get(n)! };
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
    expect(seen).toEqual(numbered(700_001, 2500).map((r) => r.reservationNumber).filter((n) => n !== 700_003));
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

  it('across a page boundary: the page before is read to find the place', async () => {
    const rows: unknown[] = numbered(1, 2500);
    const reads: number[] = [];
    const { source } = orderedSource(rows, reads);
    const page = await read(source, { first: 1000 });
    reads.length = 0;
    expect((await read(source, { first: 2, after: page.pageInfo.endCursor })).numbers).toEqual([1001, 1002]);
    expect([...new Set(reads)].sort()).toEqual([1, 2]);
    rows.splice(10, 3); // reservation 1001 moves to position 997, on the page before the cursor's
    expect((await read(source, { first: 2, after: page.pageInfo.endCursor })).numbers).toEqual([1001, 1002]);
    rows.splice(0, 0, ...numbered(-20, 20)); // and now to position 1017, on the page after
    expect((await read(source, { first: 2, after: page.pageInfo.endCursor })).numbers).toEqual([1001, 1002]);
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

  it('still takes an offset-only cursor (issued before cursors carried the number)', async () => {
    const { source } = orderedSource(numbered(1, 50));
    const old = Buffer.from(JSON.stringify({ o: 4, k: 'test-list' })).toString('base64url');
    expect((await read(source, { first: 2, after: old })).numbers).toEqual([6, 7]);
  });

  it('refuses a cursor whose number is not a list of integers', async () => {
    const { source } = orderedSource(numbered(1, 50));
    const forged = Buffer.from(JSON.stringify({ o: 4, k: 'test-list', n: ['x'] })).toString('base64url');
    expect(() => resolveWindow(source, { first: 2, after: forged })).toThrow('after: not a cursor of this connection');
  });
});

import { BadInputError } from '../upstream/errors.ts';

/**
 * A connection cursor: the offset of a record in the filtered list, a hash of what the list is (so
 * a cursor from another filter is refused), the licensee it was made for and, for lists the
 * service orders, the record's sort key (reservation number; then question for answers), so that
 * a walk resumed after the list changed can find its place again. Opaque to clients: base64url of
 * a small JSON object.
 *
 * The licensee is checked, not signed, for the reason global ids are (ids/global-id.ts): a
 * cursor only positions a walk over a list the request reads with its own token. The check makes
 * another licensee's cursor a clear BAD_USER_INPUT before any call instead of a walk from an
 * offset that means nothing here. Cursors made before they carried the licensee are refused the
 * same way: they cannot say whose they are, and a client starts the walk again.
 */
export interface Cursor {
  offset: number;
  /** The sort key of the record at `offset`; absent in cursors made before it was carried. */
  order?: readonly number[];
  /**
   * The sort key of the record that followed it when the cursor was made, carried only by a
   * record on the last position of a page: a walk resumed there checks its place on the next page,
   * which it reads anyway, instead of reading the cursor's page again (seek.ts).
   */
  next?: readonly number[];
}

/** The list a cursor walks: what it is and whose it is (a PagedSource is one). */
export interface CursorList {
  key: string;
  licensee: string;
}

interface CursorJson {
  o: number;
  k: string;
  l: string;
  n?: readonly number[];
  x?: readonly number[];
}

export function encodeCursor(
  list: CursorList,
  offset: number,
  order?: readonly number[] | null,
  next?: readonly number[] | null,
): string {
  const json: CursorJson = {
    o: offset,
    k: list.key,
    l: list.licensee,
    ...(order ? { n: order } : {}),
    ...(order && next ? { x: next } : {}),
  };
  return Buffer.from(JSON.stringify(json)).toString('base64url');
}

export function decodeCursor(cursor: string, list: CursorList, arg: string): Cursor {
  let parsed: Partial<Record<keyof CursorJson, unknown>> | null;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw notACursor(arg);
  }
  if (typeof parsed !== 'object' || parsed === null || !isOffset(parsed.o)) throw notACursor(arg);
  if (parsed.l !== list.licensee) throw new BadInputError(`${arg}: the cursor was not made for this licensee`, arg);
  if (parsed.k !== list.key) throw new BadInputError(`${arg}: the cursor belongs to another list or filter`, arg);
  if (parsed.n === undefined && parsed.x === undefined) return { offset: parsed.o };
  // A next key is only ever issued beside the record's own.
  if (!isSortKey(parsed.n) || (parsed.x !== undefined && !isSortKey(parsed.x))) throw notACursor(arg);
  return { offset: parsed.o, order: parsed.n, ...(parsed.x === undefined ? {} : { next: parsed.x }) };
}

function isOffset(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function isSortKey(value: unknown): value is number[] {
  return Array.isArray(value) && value.length > 0 && value.every(Number.isSafeInteger);
}

function notACursor(arg: string): BadInputError {
  return new BadInputError(`${arg}: not a cursor of this connection`, arg);
}

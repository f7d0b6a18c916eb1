import { BadInputError } from '../upstream/errors.ts';

/**
 * A connection cursor: the offset of a record in the filtered list, a hash of what the list is (so
 * a cursor from another filter is refused) and, for lists the service orders, the record's sort
 * key (reservation number; then question for answers), so that a walk resumed after the list
 * changed can find its place again. Opaque to clients: base64url of a small JSON object.
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

interface CursorJson {
  o: number;
  k: string;
  n?: readonly number[];
  x?: readonly number[];
}

export function encodeCursor(key: string, offset: number, order?: readonly number[] | null, next?: readonly number[] | null): string {
  const json: CursorJson = { o: offset, k: key, ...(order ? { n: order } : {}), ...(order && next ? { x: next } : {}) };
  return Buffer.from(JSON.stringify(json)).toString('base64url');
}

export function decodeCursor(cursor: string, key: string, arg: string): Cursor {
  let parsed: Partial<Record<keyof CursorJson, unknown>> | null;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw notACursor(arg);
  }
  if (typeof parsed !== 'object' || parsed === null || !isOffset(parsed.o)) throw notACursor(arg);
  if (parsed.k !== key) throw new BadInputError(`${arg}: the cursor belongs to another list or filter`, arg);
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

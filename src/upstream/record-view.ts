import type { z } from 'zod';
import { fastCodecOf, unwrapList } from './codecs.ts';
import { UpstreamResponseError } from './errors.ts';
import { FormatError } from './formats.ts';

/**
 * A record of a paged list read where it lies: a page of 1000 reservations is parsed JSON already,
 * and a query reads a few fields of it. A view keeps the record as received (`raw`), checks its
 * identifiers when it is first reached (a record without them is undecodable and skipped, as
 * LazyList says), and converts every other field of the endpoint table's shape on first read, once:
 * dates, numbers, nested objects and lists (views too). A value present but unreadable is an
 * UPSTREAM_ERROR of that field alone, not a null: the rest of the record and of the page is served.
 */

/** Fields converted by views since the process started (tests count what a query converts). */
export const viewConversions = { count: 0 };

const UNSET: unique symbol = Symbol('unset');
/** What an unreadable field is memoized as; its error, thrown on each read, is kept aside (rare). */
const UNREADABLE: unique symbol = Symbol('unreadable');
const errorsOf = new WeakMap<unknown[], Map<number, UpstreamResponseError>>();

type Reader = (value: unknown) => unknown;
interface Field {
  key: string;
  read: Reader;
  required: boolean;
}

export abstract class RecordView {
  constructor(
    /** The record exactly as received. */
    readonly raw: Record<string, unknown>,
    protected readonly memo: unknown[],
    /**
     * Values read where the record's own is null, absent or unreadable: a reservation's event, known
     * from the request that listed it (and declared non-null by the schema).
     */
    protected readonly defaults: Readonly<Record<string, unknown>> | undefined,
  ) {}

  /** The same view (sharing what was converted) with `defaults` for its null, absent or unreadable fields. */
  abstract withDefaults(defaults: Readonly<Record<string, unknown>>): this;

  /** Every field converted, unreadable ones as null: what a change feed sends to other replicas. */
  abstract toJSON(): Record<string, unknown>;

  /** The shape's fields, by position in `memo` (on each shape's prototype). */
  declare protected readonly fields: readonly Field[];

  /**
   * A read that is not a converted value's: a first read, a null, an unreadable value. Out of the
   * getters, which stay small enough to inline: a page of 1000 records is read 15,000 times a query.
   */
  protected slowRead(i: number): unknown {
    const memo = this.memo;
    let value = memo[i];
    const { key, read } = this.fields[i]!;
    if (value === UNSET) {
      viewConversions.count++;
      value = memo[i] = convert(read, key, this.raw[key], memo, i);
    }
    if (value == null || value === UNREADABLE) {
      const fallback = this.defaults?.[key];
      if (fallback !== undefined) return fallback;
      if (value === UNREADABLE) throw errorsOf.get(memo)!.get(i)!;
    }
    return value;
  }
}

/** `record` with `defaults` for its null, absent (or, in a view, unreadable) fields: a view stays a view, a plain object is copied. */
export function withDefaults<T extends object>(record: T, defaults: { [K in keyof T]?: T[K] }): T {
  if (record instanceof RecordView) return record.withDefaults(defaults as Record<string, unknown>) as T;
  const out = { ...record } as Record<string, unknown>;
  for (const [key, value] of Object.entries(defaults)) out[key] ??= value;
  return out as T;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Per shape, with `raw` and without (one shape serves a hotel list's records and a reservation's hotel). */
const decoders = [true, false].map(() => new WeakMap<z.ZodRawShape, (value: unknown) => RecordView | null>());

/**
 * The view maker of a shape of the endpoint table: null for a value that is not an object or lacks
 * a required identifier. Built once per shape (a table row's schemas are built once per zone).
 */
export function viewOf(shape: z.ZodRawShape, withRaw = true): (value: unknown) => RecordView | null {
  const made = decoders[withRaw ? 0 : 1]!;
  let decode = made.get(shape);
  if (!decode) made.set(shape, (decode = makeView(shape, withRaw)));
  return decode;
}

function makeView(shape: z.ZodRawShape, withRaw: boolean): (value: unknown) => RecordView | null {
  const keys = Object.keys(shape);
  const fields: Field[] = keys.map((key) => ({ key, ...readerOf(shape[key] as z.ZodType) }));
  const required = fields.flatMap((f, i) => (f.required ? [i] : []));

  class View extends RecordView {
    withDefaults(defaults: Readonly<Record<string, unknown>>): this {
      return new View(this.raw, this.memo, defaults) as this;
    }

    toJSON(): Record<string, unknown> {
      const out: Record<string, unknown> = {};
      for (const key of keys) {
        try {
          out[key] = (this as unknown as Record<string, unknown>)[key];
        } catch {
          out[key] = null;
        }
      }
      if (withRaw) out.raw = this.raw;
      return out;
    }
  }

  Object.defineProperty(View.prototype, 'fields', { value: fields });
  fields.forEach(({ key }, i) => {
    Object.defineProperty(View.prototype, key, {
      enumerable: true,
      get(this: View) {
        const value = this.memo[i];
        return value === UNSET || value === UNREADABLE || value == null ? this.slowRead(i) : value;
      },
    });
  });

  return (value) => {
    if (!isObject(value)) return null;
    const memo = new Array<unknown>(fields.length).fill(UNSET);
    for (const i of required) {
      const field = fields[i]!;
      const raw = value[field.key];
      if (raw == null) return null;
      try {
        memo[i] = field.read(raw);
      } catch {
        return null;
      }
    }
    return new View(value, memo, undefined);
  };
}

function convert(read: Reader, key: string, value: unknown, memo: unknown[], i: number): unknown {
  try {
    return read(value);
  } catch (error) {
    // Only the form is named: the value is the licensee's data, and may be one `raw` hides from this client.
    const why = error instanceof FormatError ? error.message : 'not in the form the endpoint table expects';
    let errors = errorsOf.get(memo);
    if (!errors) errorsOf.set(memo, (errors = new Map()));
    errors.set(i, new UpstreamResponseError(`the service sent ${key} in a form the gateway cannot read: ${why}`));
    return UNREADABLE;
  }
}

/** How a field of a shape is read: by the converter its builder filed, else by its zod schema. */
function readerOf(schema: z.ZodType): { read: Reader; required: boolean } {
  const codec = fastCodecOf(schema);
  switch (codec?.kind) {
    case 'leaf': {
      const { convert } = codec;
      return { read: (value) => (value == null ? null : convert(value)), required: codec.required };
    }
    case 'object':
    case 'record': {
      const decode = viewOf(codec.shape, codec.kind === 'record');
      return {
        read: (value) => {
          if (value == null) return null;
          const view = decode(value);
          if (view === null)
            throw new FormatError(isObject(value) ? 'an object without its identifier' : 'not an object');
          return view;
        },
        required: false,
      };
    }
    case 'list': {
      const item = itemReader(codec.item);
      const { orEmpty } = codec;
      return {
        read: (value) => {
          if (value == null) return orEmpty ? [] : null;
          const items = unwrapList(value);
          if (!Array.isArray(items)) throw new FormatError('not a list');
          const out: unknown[] = [];
          for (const x of items) {
            const y = item(x);
            if (y !== undefined) out.push(y);
          }
          return out;
        },
        required: false,
      };
    }
    default:
      return {
        read: (value) => {
          const parsed = schema.safeParse(value);
          if (parsed.success) return parsed.data ?? null;
          if (value == null) return null;
          throw new FormatError('not in the form the endpoint table expects');
        },
        required: false,
      };
  }
}

/** An item of a list, or undefined for one that does not read (dropped, as the table's lists drop them). */
function itemReader(schema: z.ZodType): (value: unknown) => unknown {
  const codec = fastCodecOf(schema);
  if (codec?.kind === 'object' || codec?.kind === 'record') {
    const decode = viewOf(codec.shape, codec.kind === 'record');
    return (value) => decode(value) ?? undefined;
  }
  const { read } = readerOf(schema);
  return (value) => {
    try {
      return value == null ? undefined : read(value);
    } catch {
      return undefined;
    }
  };
}

/**
 * A field as code other than the schema reads it (a change feed's order and filters): null when the
 * service's value is unreadable, as a client reading the field would get an error for it instead.
 */
export function readOrNull<T, K extends keyof T>(record: T, key: K): T[K] | null {
  try {
    return record[key];
  } catch (error) {
    if (error instanceof UpstreamResponseError) return null;
    throw error;
  }
}

import { z } from 'zod';
import {
  FormatError,
  fromUpstreamDate,
  fromUpstreamTimestamp,
  normalizeIsoTimestamp,
  parseIsoDate,
  toCountryCode,
  toUpstreamDate,
  toUpstreamTimestamp,
} from './formats.ts';

/**
 * Zod pieces for the endpoint table. Response pieces are lenient, as the tolerated variations
 * of docs/upstream.md demand: numeric strings become numbers, a value that does not parse becomes
 * null (the record stays visible through `raw`), and only identifiers are required. The paged
 * lists are read through record views instead (record-view.ts), from the converters filed here:
 * there a value that does not parse is an error of that field.
 * Parameter pieces are strict and turn gateway values (ISO dates, booleans) into wire values.
 */

const NUMERIC = /^\s*-?\d+(\.\d+)?\s*$/;
const toNumber = (v: unknown) => (typeof v === 'string' && NUMERIC.test(v) ? Number(v) : v);
const toText = (v: unknown) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v);
const toBool = (v: unknown) => (v === 'true' ? true : v === 'false' ? false : v);

/**
 * How a record view (record-view.ts) reads a piece of the table without zod: each fromService
 * builder files its schema here with a plain converter, so the endpoint table stays the one list
 * of fields. A schema without an entry is read by zod when its field is read.
 */
export type FastCodec =
  /** `convert` takes a value that is neither null nor absent, and throws a FormatError saying what it is not. */
  | { kind: 'leaf'; convert: (value: unknown) => unknown; required: boolean }
  | { kind: 'object'; shape: z.ZodRawShape }
  | { kind: 'record'; shape: z.ZodRawShape }
  | { kind: 'list'; item: z.ZodType; orEmpty: boolean };

const fastCodecs = new WeakMap<z.ZodType, FastCodec>();

/** The plain converter filed for a schema of the table; a loose object's shape is read from zod's public API. */
export function fastCodecOf(schema: z.ZodType): FastCodec | undefined {
  const codec = fastCodecs.get(schema);
  if (codec) return codec;
  if (schema instanceof z.ZodObject) return { kind: 'object', shape: schema.shape };
  return undefined;
}

function filed<S extends z.ZodType>(schema: S, codec: FastCodec): S {
  fastCodecs.set(schema, codec);
  return schema;
}

const leaf = (convert: (value: unknown) => unknown, required = false): FastCodec => ({
  kind: 'leaf',
  convert,
  required,
});

function readInt(value: unknown): number {
  const n = toNumber(value);
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new FormatError('not a whole number');
  return n;
}

function readNumber(value: unknown): number {
  const n = toNumber(value);
  if (typeof n !== 'number' || !Number.isFinite(n)) throw new FormatError('not a number');
  return n;
}

function readText(value: unknown): string {
  const text = toText(value);
  if (typeof text !== 'string') throw new FormatError('not text');
  return text;
}

function readBool(value: unknown): boolean {
  const b = toBool(value);
  if (typeof b !== 'boolean') throw new FormatError('not true or false');
  return b;
}

/** A converter from formats.ts, whose messages quote the value: the view's error names the field and the form only. */
function expecting<T>(form: string, convert: (text: string) => T, textOf: (value: unknown) => unknown = toText) {
  return (value: unknown): T => {
    const text = textOf(value);
    if (typeof text !== 'string') throw new FormatError(`not ${form}`);
    try {
      return convert(text);
    } catch {
      throw new FormatError(`not ${form}`);
    }
  };
}

const DATE_FORM = 'a date like 13-Mar-2027';
const TIMESTAMP_FORM = 'a time like 05-Jan-2027 4:02 pm';
const ISO_TIMESTAMP_FORM = 'an ISO 8601 timestamp with offset';

/** Reading the service's answers: lenient field schemas. */
export const fromService = {
  /** A required integer identifier (a record without it is skipped). */
  id: () => filed(z.preprocess(toNumber, z.number().int()), leaf(readInt, true)),
  /** A required text identifier. */
  textId: () =>
    filed(
      z.preprocess(toText, z.string().min(1)),
      leaf((value) => {
        const text = readText(value);
        if (text.length === 0) throw new FormatError('empty');
        return text;
      }, true),
    ),
  int: () => filed(z.preprocess(toNumber, z.number().int()).nullish().catch(null), leaf(readInt)),
  number: () => filed(z.preprocess(toNumber, z.number()).nullish().catch(null), leaf(readNumber)),
  text: () => filed(z.preprocess(toText, z.string()).nullish().catch(null), leaf(readText)),
  bool: () => filed(z.preprocess(toBool, z.boolean()).nullish().catch(null), leaf(readBool)),
  /** `dd-Mon-yyyy` (or ISO) → `yyyy-mm-dd`; null when unreadable. */
  date: () =>
    filed(
      z
        .preprocess(toText, z.string())
        .transform((s, ctx) => lenient(() => fromUpstreamDate(s), ctx))
        .nullish()
        .catch(null),
      leaf(expecting(DATE_FORM, fromUpstreamDate)),
    ),
  /** `dd-Mon-yyyy h:mm am` in the licensee's zone (or ISO) → ISO with offset. */
  timestamp: (zone: string) =>
    filed(
      z
        .preprocess(toText, z.string())
        .transform((s, ctx) => lenient(() => fromUpstreamTimestamp(s, zone), ctx))
        .nullish()
        .catch(null),
      leaf(expecting(TIMESTAMP_FORM, (s) => fromUpstreamTimestamp(s, zone))),
    ),
  /** An ISO 8601 timestamp with offset, as event dates are specified. */
  isoTimestamp: () =>
    filed(
      z
        .string()
        .transform((s, ctx) => lenient(() => normalizeIsoTimestamp(s), ctx))
        .nullish()
        .catch(null),
      leaf(expecting(ISO_TIMESTAMP_FORM, normalizeIsoTimestamp, (v) => v)),
    ),
  /** A list, unwrapped from `{"anything": [...]}` when upstream wraps it; items that fail are dropped. */
  list: <T extends z.ZodType>(item: T) =>
    filed(
      z
        .preprocess(unwrapList, z.array(z.unknown()))
        .transform((items) => keepValid(item, items))
        .nullish()
        .catch(null),
      { kind: 'list', item, orEmpty: false },
    ),
  /** A list as `list` reads it, empty when absent. */
  items: <T extends z.ZodType>(item: T) =>
    filed(
      fromService.list(item).transform((x) => x ?? []),
      { kind: 'list', item, orEmpty: true },
    ),
  object: <T extends z.ZodRawShape>(shape: T) =>
    filed(z.looseObject(shape).nullish().catch(null), { kind: 'object', shape }),
  /** A record of the service: its known fields parsed, plus `raw`, the record exactly as received. */
  record: <T extends z.ZodRawShape>(shape: T) => {
    const inner = z.looseObject(shape);
    return filed(
      z.unknown().transform((value, ctx) => {
        const parsed = inner.safeParse(value);
        if (!parsed.success) {
          for (const issue of parsed.error.issues)
            ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
          return z.NEVER;
        }
        return { ...parsed.data, raw: value as Record<string, unknown> };
      }),
      { kind: 'record', shape },
    );
  },
};

function lenient<T>(convert: () => T, ctx: z.RefinementCtx): T {
  try {
    return convert();
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
}

function keepValid<T extends z.ZodType>(item: T, items: unknown[]): z.output<T>[] {
  const out: z.output<T>[] = [];
  for (const x of items) {
    const parsed = item.safeParse(x);
    if (parsed.success) out.push(parsed.data);
  }
  return out;
}

/** `{"reservations": [...]}` or `{"data": [...]}` → the array (docs/upstream.md, a tolerated variation). */
export function unwrapList(value: unknown): unknown {
  if (Array.isArray(value) || value === null || typeof value !== 'object') return value;
  const arrays = Object.values(value).filter(Array.isArray);
  return arrays.length === 1 ? arrays[0] : value;
}

/** Writing the service's parameters: what callers give, checked before any call, converted to wire values. */
export const toService = {
  id: () => z.number().int().min(0).max(2_147_483_647),
  page: () => z.number().int().min(1).max(1_000_000),
  /** Text up to the service's limit (255 unless docs/upstream.md, "Limits", says otherwise). */
  text: (max = 255) => z.string().max(max, `must be at most ${max} characters`),
  bool: () => z.boolean(),
  /** `yyyy-mm-dd` → `dd-Mon-yyyy` */
  upstreamDate: () => z.string().transform((s, ctx) => strict(() => toUpstreamDate(s), ctx)),
  /** `yyyy-mm-dd`, checked and sent as is (the shopping view takes it so). */
  isoDate: () => z.string().transform((s, ctx) => strict(() => parseIsoDate(s).toString(), ctx)),
  /** ISO instant → `dd-Mon-yyyy h:mm am` in the licensee's zone. */
  upstreamTimestamp: (zone: string) =>
    z.string().transform((s, ctx) => strict(() => toUpstreamTimestamp(s, zone), ctx)),
  country: () => z.string().transform((s, ctx) => strict(() => toCountryCode(s), ctx)),
};

function strict<T>(convert: () => T, ctx: z.RefinementCtx): T {
  try {
    return convert();
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: error instanceof FormatError ? error.message : String(error) });
    return z.NEVER;
  }
}

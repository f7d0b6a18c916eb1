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
 * null (the record stays visible through `raw`), and only identifiers are required.
 * Parameter pieces are strict and turn gateway values (ISO dates, booleans) into wire values.
 */

const NUMERIC = /^\s*-?\d+(\.\d+)?\s*$/;
const toNumber = (v: unknown) => (typeof v === 'string' && NUMERIC.test(v) ? Number(v) : v);
const toText = (v: unknown) => (typeof v === 'number' || typeof v === 'boolean' ? String(v) : v);
const toBool = (v: unknown) => (v === 'true' ? true : v === 'false' ? false : v);

/** Reading the service's answers: lenient field schemas. */
export const fromService = {
  /** A required integer identifier (a record without it is skipped). */
  id: () => z.preprocess(toNumber, z.number().int()),
  /** A required text identifier. */
  textId: () => z.preprocess(toText, z.string().min(1)),
  int: () => z.preprocess(toNumber, z.number().int()).nullish().catch(null),
  number: () => z.preprocess(toNumber, z.number()).nullish().catch(null),
  text: () => z.preprocess(toText, z.string()).nullish().catch(null),
  bool: () => z.preprocess(toBool, z.boolean()).nullish().catch(null),
  /** `dd-Mon-yyyy` (or ISO) → `yyyy-mm-dd`; null when unreadable. */
  date: () =>
    z
      .preprocess(toText, z.string())
      .transform((s, ctx) => lenient(() => fromUpstreamDate(s), ctx))
      .nullish()
      .catch(null),
  /** `dd-Mon-yyyy h:mm am` in the licensee's zone (or ISO) → ISO with offset. */
  timestamp: (zone: string) =>
    z
      .preprocess(toText, z.string())
      .transform((s, ctx) => lenient(() => fromUpstreamTimestamp(s, zone), ctx))
      .nullish()
      .catch(null),
  /** An ISO 8601 timestamp with offset, as event dates are specified. */
  isoTimestamp: () =>
    z
      .string()
      .transform((s, ctx) => lenient(() => normalizeIsoTimestamp(s), ctx))
      .nullish()
      .catch(null),
  /** A list, unwrapped from `{"anything": [...]}` when upstream wraps it; items that fail are dropped. */
  list: <T extends z.ZodType>(item: T) =>
    z
      .preprocess(unwrapList, z.array(z.unknown()))
      .transform((items) => keepValid(item, items))
      .nullish()
      .catch(null),
  object: <T extends z.ZodRawShape>(shape: T) => z.looseObject(shape).nullish().catch(null),
  /** A record of the service: its known fields parsed, plus `raw`, the record exactly as received. */
  record: <T extends z.ZodRawShape>(shape: T) => {
    const inner = z.looseObject(shape);
    return z.unknown().transform((value, ctx) => {
      const parsed = inner.safeParse(value);
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
        return z.NEVER;
      }
      return { ...parsed.data, raw: value as Record<string, unknown> };
    });
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

import { z } from 'zod';
import { RawJson } from './raw-json.ts';

/** The variations of the real service the gateway tolerates (docs/upstream.md), each switchable for tests. */
export const variationsSchema = z.strictObject({
  /** Errors answered with status 200 and one of the three bodies docs/upstream.md lists. */
  errorWith200: z.enum(['error', 'success-false', 'status-error']).nullable().optional(),
  /**
   * Token rejections with another status and body: `code` (TOKEN_EXPIRED), `field` (an error naming
   * the `token` field), `message` (`{"success": false, "message": …}`, no code and no field: the
   * `message` given, else "Invalid or expired token") or `empty` (no body at all). With
   * `revokeAfterUses` N, each token is also revoked early, once it has served N requests (a
   * service that revokes tokens after a few dozen uses): the next request with it is refused so.
   */
  tokenRejection: z
    .strictObject({
      status: z.union([z.literal(200), z.literal(400), z.literal(401), z.literal(403)]),
      form: z.enum(['code', 'field', 'message', 'empty']),
      message: z.string().min(1).max(200).optional(),
      revokeAfterUses: z.number().int().min(1).max(1_000_000).optional(),
    })
    .nullable()
    .optional(),
  /** Errors about a parameter quote the value the request gave it, as many services do (never a key or token). */
  echoValues: z.boolean().optional(),
  /** Page counts as a bare integer, and 1 for an empty result. */
  bareIntegerPageCount: z.boolean().optional(),
  /** Lists wrapped in an object: named after the list, or as `data`. */
  wrappedArrays: z.enum(['named', 'data']).nullable().optional(),
  /** Every number sent as a numeric string. */
  numericStrings: z.boolean().optional(),
  /** Error bodies that are not JSON: an HTML page from a proxy, or nothing. */
  nonJsonErrors: z.enum(['html', 'empty']).nullable().optional(),
  /** 429 without Retry-After. */
  noRetryAfter: z.boolean().optional(),
  /** Unknown extra properties on every object. */
  extraProperties: z.boolean().optional(),
});

export type Variations = z.infer<typeof variationsSchema>;

/** Applies the shape variations to a successful body. */
export function shapeBody(body: unknown, v: Variations, listName: string | undefined, isPageCount: boolean): unknown {
  let out = body;
  if (out instanceof RawJson) {
    if (!v.numericStrings && !v.extraProperties) {
      return v.wrappedArrays ? new RawJson(`{${JSON.stringify(wrapperName(v, listName))}:${out.text}}`) : out;
    }
    out = JSON.parse(out.text);
  }
  if (isPageCount && v.bareIntegerPageCount) {
    const n = (body as { pageCount: number }).pageCount;
    out = n === 0 ? 1 : n;
  }
  if (v.numericStrings || v.extraProperties) out = deepMap(out, v);
  if (Array.isArray(out) && v.wrappedArrays) out = { [wrapperName(v, listName)]: out };
  return out;
}

function wrapperName(v: Variations, listName: string | undefined): string {
  return v.wrappedArrays === 'data' ? 'data' : (listName ?? 'items');
}

function deepMap(value: unknown, v: Variations): unknown {
  if (typeof value === 'number') return v.numericStrings ? String(value) : value;
  if (Array.isArray(value)) return value.map((x) => deepMap(x, v));
  if (value !== null && typeof value === 'object') {
    // Without a prototype, a key such as `__proto__` stays a property instead of being dropped.
    const out: Record<string, unknown> = Object.create(null);
    for (const [k, x] of Object.entries(value)) out[k] = deepMap(x, v);
    if (v.extraProperties) out.legacyRef = 'LR-0';
    return out;
  }
  return value;
}

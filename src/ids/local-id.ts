/// <reference lib="es2024.string" />
import { toService } from '../upstream/codecs.ts';
import { BadInputError } from '../upstream/errors.ts';

/*
 * The local part of a global id (global-id.ts): the record's own identifiers, numbers or text,
 * joined by `:`. Written by the schema's Node types and the webhooks' messages, read back by
 * `node`/`nodes` and the federation's entity references.
 */

/** The endpoint table's rule for an identifier, so an id refused here is one the service would refuse. */
const upstreamId = toService.id();

function isUpstreamId(value: unknown): value is number {
  return upstreamId.safeParse(value).success;
}

/**
 * The numbers of a global id's local part (`5001`, `5001:700001`), or null when it cannot name a
 * record: wrong count of parts, not plain digits, or outside what the service can hold. Such an
 * id finds nothing, so `node` and `nodes` answer null for it without asking the service.
 */
export function idNumbers(localId: string, parts: number): number[] | null {
  const texts = localId.split(':');
  if (texts.length !== parts || !texts.every((text) => /^\d{1,10}$/.test(text))) return null;
  const numbers = texts.map(Number);
  return numbers.every(isUpstreamId) ? numbers : null;
}

/** Refuses a list naming an impossible id before any of its ids is fetched. */
export function checkIdList(ids: readonly number[], arg: string): void {
  const index = ids.findIndex((id) => !isUpstreamId(id));
  if (index >= 0)
    throw new BadInputError(`${arg}[${index}]: ${ids[index]} is not an identifier (0 to 2147483647)`, arg);
}

/**
 * A UTF-16 surrogate without its other half. Text holding one is not well-formed: it has no UTF-8
 * form, and `encodeURIComponent` throws on it. Clients cannot send one (operations/well-formed-text.ts),
 * but a record of the service may hold one.
 */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** The same, captured: `split` keeps each one between the well-formed pieces around it. */
const LONE_SURROGATE_PIECE = new RegExp(`(${LONE_SURROGATE.source})`);
/** A lone surrogate's escape in an id: the bytes of its generalized UTF-8 (WTF-8) form, ED A0–BF 80–BF. */
const ESCAPED_SURROGATE = /%ED%([AB][0-9A-F])%([89AB][0-9A-F])/gi;

const hexByte = (byte: number) => `%${byte.toString(16).toUpperCase()}`;

/** `%ED%A0%BD` for U+D83D. */
function escapedSurrogate(surrogate: string): string {
  const unit = surrogate.charCodeAt(0);
  return `%ED${hexByte(0x80 | ((unit >> 6) & 0x3f))}${hexByte(0x80 | (unit & 0x3f))}`;
}

/** U+D83D for `%ED%A0%BD` (a `replace` callback of ESCAPED_SURROGATE). */
const surrogateOf = (_escape: string, second: string, third: string) =>
  String.fromCharCode(0xd000 | ((Number.parseInt(second, 16) & 0x3f) << 6) | (Number.parseInt(third, 16) & 0x3f));

/**
 * A text part of a local id (a group code, an attendee id): escaped so `:` and `@` stay separators.
 * Ids are stable public names, so well-formed text is escaped as it always was; a lone surrogate,
 * which `encodeURIComponent` throws on, as its WTF-8 bytes (which no well-formed text escapes to).
 */
export function idPart(text: string): string {
  if (text.isWellFormed()) return encodeURIComponent(text);
  return text
    .split(LONE_SURROGATE_PIECE)
    .map((piece, i) => (i % 2 === 0 ? encodeURIComponent(piece) : escapedSurrogate(piece)))
    .join('');
}

/** The text parts of a local id, or null when it has not `count` of them, non-empty. */
export function idTextParts(localId: string, count: number): string[] | null {
  const parts = localId.split(':');
  if (parts.length !== count) return null;
  try {
    // A lone surrogate's escape first: decodeURIComponent throws on it.
    const texts = parts.map((part) => decodeURIComponent(part.replace(ESCAPED_SURROGATE, surrogateOf)));
    return texts.every((text) => text.trim() !== '') ? texts : null;
  } catch {
    return null; // a malformed escape names nothing
  }
}

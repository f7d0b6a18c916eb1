import { Readable } from 'node:stream';
import type { ExecutionResult } from 'graphql';
import { type Plugin, processRegularResult } from 'graphql-yoga';

/**
 * A large answer (a list of at least LONG_LIST items: a page of reservations) is written as it is
 * serialised, in pieces of about PIECE characters, instead of as one string of its whole JSON and
 * then one buffer of its bytes. A page of 1000 reservations is some 300 KB of JSON: whole, the
 * string and its bytes are each a large object that V8 puts straight into old space, where it stays
 * until the next full collection; in pieces, each is young garbage, and the answer holds about what
 * is being written (docs/decisions/0006-lean-answers.md). The bytes are exactly JSON.stringify's.
 *
 * Only an answer with data and without errors or `extensions.http` is streamed (those decide the
 * status and headers as Yoga's own processor reads them), over HTTP's JSON media types; its status
 * is 200 and its length is the chunked encoding's. Everything else keeps Yoga's processor.
 */
export function useStreamedLargeAnswers(): Plugin {
  return {
    onResultProcess({ request, result, resultProcessor, setResultProcessor }) {
      if (resultProcessor !== processRegularResult || !isLargeAnswer(result)) return;
      setResultProcessor(
        (answer, fetchAPI) =>
          new fetchAPI.Response(new JsonPieces(answer) as never, {
            status: 200,
            headers: { 'Content-Type': `${jsonMediaType(request)}; charset=utf-8` },
          }),
        jsonMediaType(request),
      );
    },
  };
}

/** Lists at least this long make an answer large (the bulkhead's large windows are over 200 records). */
export const LONG_LIST = 200;
/** Characters serialised before they are handed to the socket: under V8's large objects (128 KB), in few writes. */
const PIECE = 64 * 1024;
/** Items of a long list serialised at once (a reservation with its contact and rooms is some 300 characters). */
const SLICE = 64;

/** A single answer with data, no errors and no `extensions.http`, holding a long list. */
function isLargeAnswer(result: unknown): result is ExecutionResult {
  if (typeof result !== 'object' || result === null || Array.isArray(result) || Symbol.asyncIterator in result)
    return false;
  const answer = result as ExecutionResult & { extensions?: { http?: unknown } };
  return !answer.errors?.length && answer.extensions?.http === undefined && holdsLongList(answer.data);
}

/** Whether a long list is reached through objects alone (the lists of an answer's path, never inside one). */
function holdsLongList(value: unknown): boolean {
  if (Array.isArray(value)) return value.length >= LONG_LIST;
  if (value === null || typeof value !== 'object') return false;
  for (const key in value) if (holdsLongList((value as Record<string, unknown>)[key])) return true;
  return false;
}

/**
 * The media type Yoga's processor would have written (its `result-processor/accept.js`): of the
 * request's Accept entries in utf-8, the first that takes a JSON answer decides, `application/json`
 * when it takes that, else GraphQL over HTTP's.
 */
function jsonMediaType(request: Request): string {
  for (const entry of (request.headers.get('accept') || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [type = '', ...params] = entry.split(';');
    if ((params.find((param) => param.includes('charset=')) ?? 'charset=utf-8') !== 'charset=utf-8') continue;
    const [pre, suf] = type.split('/');
    if (pre !== '*' && pre !== 'application') continue;
    if (suf === '*' || suf === 'json') return 'application/json';
    if (suf === 'graphql-response+json') return 'application/graphql-response+json';
  }
  return 'application/json';
}

/** An answer's JSON, serialised piece by piece as the socket takes it. */
export class JsonPieces extends Readable {
  readonly #parts: Iterator<string>;

  constructor(value: unknown) {
    super();
    this.#parts = jsonParts(value);
  }

  override _read(): void {
    let piece = '';
    for (let next = this.#parts.next(); !next.done; next = this.#parts.next()) {
      piece += next.value;
      if (piece.length >= PIECE) {
        const more = this.push(piece);
        piece = '';
        if (!more) return;
      }
    }
    if (piece) this.push(piece);
    this.push(null);
  }
}

/**
 * The JSON text of `value` as JSON.stringify writes it, in parts: objects are walked member by
 * member, a long list SLICE items at a time, everything else (an item of a list included) serialised whole.
 */
function* jsonParts(value: unknown): Generator<string, void, undefined> {
  if (Array.isArray(value) && value.length >= LONG_LIST) {
    // A slice at a time, serialised natively: as fast as the whole list at once, never as large.
    yield '[';
    for (let i = 0; i < value.length; i += SLICE)
      yield `${i === 0 ? '' : ','}${JSON.stringify(value.slice(i, i + SLICE)).slice(1, -1)}`;
    yield ']';
    return;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value) || 'toJSON' in value) {
    yield JSON.stringify(value) ?? 'null';
    return;
  }
  let first = true;
  yield '{';
  for (const [key, member] of Object.entries(value)) {
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    yield `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    yield* jsonParts(member);
  }
  yield '}';
}

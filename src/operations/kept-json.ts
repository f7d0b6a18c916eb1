import type { ExecutionResult } from 'graphql';

/**
 * Answers written from the JSON of their `data` kept when it was first serialised: a response-cache
 * hit, and a shared subscription's payload to each of its subscribers, serialise nothing but what
 * surrounds the data (extensions, errors), per answer and per door.
 *
 * The JSON is kept per `data` object, so it holds exactly as long as the object is the one written:
 * a plugin that changes an answer's data builds a new object (never edits the kept one, which a
 * cache or another subscriber shares) and that object is serialised afresh. A result carries the
 * serialiser as `stringify`, the property Yoga's result processor, the SSE streams and graphql-jit
 * already honour; `{...result}` copies carry it along.
 */
const jsonOfData = new WeakMap<object, string>();

/** The JSON of `data`, serialised on the first call and kept for the object's life. */
export function keptJson(data: object): string {
  let json = jsonOfData.get(data);
  if (json === undefined) jsonOfData.set(data, (json = JSON.stringify(data)));
  return json;
}

type Serialisable = ExecutionResult & { stringify?: unknown };

/** A result as JSON, its `data` from the kept JSON: only what surrounds it is serialised now. */
export function stringifyKept(result: Serialisable): string {
  const { data, stringify: _stringify, ...rest } = result;
  if (data === null || typeof data !== 'object') return JSON.stringify(result);
  const others = JSON.stringify(rest);
  return others === '{}' ? `{"data":${keptJson(data)}}` : `{"data":${keptJson(data)},${others.slice(1)}`;
}

/** Marks `result` (in place) to be written from its data's kept JSON by every door. */
export function writtenFromKeptJson<T extends ExecutionResult>(result: T): T {
  (result as Serialisable).stringify = stringifyKept;
  return result;
}

/** Whether `value` is a result written from kept JSON (the sockets splice it in: websocket.ts). */
export function isWrittenFromKeptJson(value: unknown): value is ExecutionResult & { data: object } {
  const result = value as Serialisable | null;
  return (
    typeof result === 'object' &&
    result !== null &&
    result.stringify === stringifyKept &&
    typeof result.data === 'object' &&
    result.data !== null
  );
}

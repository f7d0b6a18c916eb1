import { Readable } from 'node:stream';
import type { ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * A subscription's SSE stream, written as Yoga's own SSE processor writes it (a `:` comment first,
 * `event: next` with each payload, `event: complete` at the end), with one keep-alive tick for every
 * stream instead of a timer each (issue 28). Yoga's processor gives each stream an interval of its
 * own that writes a comment every 12 s and a web ReadableStream wrapped around a Node one; here a
 * stream is one Node `Readable` (the server pipes it into the response as it is) and one interval
 * for all of them writes the comment to each every `SUBSCRIPTION_KEEPALIVE_MS`. Only subscriptions' streams
 * are taken over: a single answer and an `@defer`/`@stream` query keep Yoga's processor.
 */

type Payload = ExecutionResult & { extensions?: Record<string, unknown>; stringify?: (result: unknown) => string };

const KEEP_ALIVE = ':\n\n';
const HEADERS = {
  'Content-Type': 'text/event-stream',
  Connection: 'keep-alive',
  'Cache-Control': 'no-cache',
  'Content-Encoding': 'none',
};

/**
 * The tenths of the keep-alive interval: the timer ticks ten times an interval and each tick writes
 * to one tenth of the streams, so that 5,000 streams cost ten short ticks rather than one 360 ms one
 * (measured at S8's 10,000 subscribers on a loaded machine) during which nothing else is answered.
 */
const SLICES = 10;

/** The live SSE streams of one gateway and the one interval that keeps them alive. */
export class SseStreams {
  /** Each stream in one slice, given in turn as they open; a tick writes to one slice. */
  readonly #slices = Array.from({ length: SLICES }, () => new Set<SseStream>());
  readonly #sliceOf = new WeakMap<SseStream, Set<SseStream>>();
  #opened = 0;
  #open = 0;
  #next = 0;
  #tick: NodeJS.Timeout | undefined;

  constructor(readonly keepAliveMs: number) {}

  /** Streams open now (tests: a client that left leaves none). */
  open(): number {
    return this.#open;
  }

  /** The body of a subscription's SSE response: `source`'s payloads as events. */
  stream(source: AsyncIterable<Payload>): Readable {
    const stream = new SseStream(source[Symbol.asyncIterator](), this);
    const slice = this.#slices[this.#opened++ % SLICES]!;
    slice.add(stream);
    this.#sliceOf.set(stream, slice);
    this.#open++;
    this.#tick ??= setInterval(() => this.#keepAlive(), this.keepAliveMs / SLICES).unref();
    return stream;
  }

  /** Called by a stream as it ends or is destroyed (twice is once). */
  forget(stream: SseStream): void {
    if (!this.#sliceOf.get(stream)?.delete(stream)) return;
    if (--this.#open === 0 && this.#tick) {
      clearInterval(this.#tick);
      this.#tick = undefined;
    }
  }

  #keepAlive(): void {
    const slice = this.#slices[this.#next]!;
    this.#next = (this.#next + 1) % SLICES;
    // A stream whose client does not read keeps what it has: no comment piles up behind it.
    for (const stream of slice) if (stream.readableLength < stream.readableHighWaterMark) stream.push(KEEP_ALIVE);
  }

  /**
   * Yoga's plugin that hands each subscription's stream to these, after Yoga's own choice of a
   * result processor: for a subscription whose result is a stream, Yoga offers only SSE (its
   * `multipart/mixed` is for queries), so any processor it chose for one is the SSE processor.
   */
  plugin(): Plugin {
    const subscriptions = new WeakSet<object>();
    return {
      onSubscribe({ args }) {
        const request = (args.contextValue as { request?: object } | undefined)?.request;
        if (request) subscriptions.add(request);
      },
      onResultProcess: ({ request, result, resultProcessor, setResultProcessor }) => {
        if (!resultProcessor || !subscriptions.has(request) || !isAsyncIterable(result)) return;
        setResultProcessor(
          (stream, fetchAPI) =>
            new fetchAPI.Response(this.stream(stream as AsyncIterable<Payload>) as never, {
              status: 200,
              // A copy each: the ponyfill's Headers writes a header set later into the object it was given.
              headers: { ...HEADERS },
            }),
          'text/event-stream',
        );
      },
    };
  }
}

/** One subscription's events; the first bytes are a comment (some browsers wait for a first byte). */
class SseStream extends Readable {
  /** A payload is being waited for: a comment pushed meanwhile must not ask the source for another. */
  #pulling = false;

  readonly #source: AsyncIterator<Payload>;
  readonly #streams: SseStreams;

  constructor(source: AsyncIterator<Payload>, streams: SseStreams) {
    super();
    this.#source = source;
    this.#streams = streams;
    this.push(KEEP_ALIVE);
  }

  override _read(): void {
    if (this.#pulling) return;
    this.#pulling = true;
    this.#source.next().then(
      ({ done, value }) => {
        this.#pulling = false;
        if (this.destroyed) return;
        if (value != null) this.push(`event: next\ndata: ${serialized(value)}\n\n`);
        if (done) {
          this.push('event: complete\ndata:\n\n');
          this.push(null);
          this.#streams.forget(this);
        } else if (value == null) this._read();
      },
      (error: unknown) => this.destroy(error instanceof Error ? error : new Error(String(error))),
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#streams.forget(this);
    // The client left (or the response was closed): the subscription ends, as with Yoga's `cancel`.
    Promise.resolve(this.#source.return?.()).then(
      () => callback(error),
      () => callback(error),
    );
  }
}

/**
 * A payload as Yoga writes one: its own serializer when it has one, without the `http` extension
 * (status and headers meant for the response) on the payload or its errors, nor `unexpected`.
 */
function serialized(result: Payload): string {
  const stringify = result.stringify ?? JSON.stringify;
  if (!result.errors?.length && !result.extensions?.http) return stringify(result);
  const { http: _http, ...extensions } = result.extensions ?? {};
  return stringify({
    ...result,
    errors: result.errors?.map((error) => {
      const json = (typeof error.toJSON === 'function' ? error.toJSON() : error) as { extensions?: object };
      const { http: _h, unexpected: _u, ...rest } = (json.extensions ?? {}) as Record<string, unknown>;
      return { ...json, extensions: Object.keys(rest).length > 0 ? rest : undefined };
    }),
    extensions: Object.keys(extensions).length > 0 ? extensions : undefined,
  });
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * Wrappers of a result stream (a subscription, an incremental delivery) that act on its end. They
 * are plain iterators rather than async generators on purpose: a generator waiting for the source's
 * next value cannot be stopped before that value comes (its `return` queues behind the pending
 * `next`), and a change feed's next value may be minutes away. These forward `return` at once.
 */

/** `source`, calling `done` once when it ends however it ends (finished, failed, or stopped by its consumer). */
export function whenEnded<T>(source: AsyncIterable<T>, done: () => void): AsyncIterableIterator<T> {
  return new WhenEnded(source[Symbol.asyncIterator](), done);
}

/** A class, not closures: one wraps every live subscription, for as long as its client stays. */
class WhenEnded<T> implements AsyncIterableIterator<T> {
  private ended = false;

  constructor(
    private readonly iterator: AsyncIterator<T>,
    private readonly done: () => void,
  ) {}

  private end(): void {
    if (!this.ended) this.done();
    this.ended = true;
  }

  async next(): Promise<IteratorResult<T>> {
    try {
      const next = await this.iterator.next();
      if (next.done) this.end();
      return next;
    } catch (error) {
      this.end();
      throw error;
    }
  }

  async return(value?: unknown): Promise<IteratorResult<T>> {
    this.end();
    await this.iterator.return?.(value);
    return { done: true, value: value as never };
  }

  async throw(error?: unknown): Promise<IteratorResult<T>> {
    this.end();
    if (this.iterator.throw) return this.iterator.throw(error);
    throw error;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/**
 * `source` until `expired` resolves, then `last()` and the end: the source is told to stop without
 * waiting for it (a source waiting for its next value may only stop once it has it). The expiry is
 * listened to once, not raced against each `next()`: a race per value left a reaction on the
 * pending expiry for every value a long-lived stream delivered (about 350 bytes each, never freed).
 */
export function endingWhen<T>(
  source: AsyncIterable<T>,
  expired: Promise<unknown>,
  last: () => T,
  onEnd: () => void = () => {},
): AsyncIterableIterator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let finished = false;
  let hasExpired = false;
  /** The consumer's `next()` waiting for the source's next value. */
  let waiting: ((result: IteratorResult<T>) => void) | undefined;
  const finish = () => {
    if (!finished) onEnd();
    finished = true;
  };
  const stop = (): IteratorResult<T> => {
    finish();
    iterator.return?.()?.catch(() => {});
    return { done: false, value: last() };
  };
  expired.then(
    () => {
      hasExpired = true;
      const resolve = waiting;
      waiting = undefined;
      if (resolve && !finished) resolve(stop());
    },
    () => {},
  );
  return whenEnded(
    {
      [Symbol.asyncIterator]: () => ({
        next(): Promise<IteratorResult<T>> {
          if (finished) return Promise.resolve({ done: true, value: undefined as never });
          if (hasExpired) return Promise.resolve(stop());
          return new Promise<IteratorResult<T>>((resolve, reject) => {
            waiting = resolve;
            iterator.next().then(
              (next) => {
                if (waiting !== resolve) return;
                waiting = undefined;
                resolve(next);
              },
              (error: unknown) => {
                if (waiting !== resolve) return;
                waiting = undefined;
                reject(error);
              },
            );
          });
        },
        async return(value?: unknown) {
          finish();
          await iterator.return?.(value);
          return { done: true, value: value as never };
        },
      }),
    },
    finish,
  );
}

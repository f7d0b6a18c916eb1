/**
 * Wrappers of a result stream (a subscription, an incremental delivery) that act on its end. They
 * are plain iterators rather than async generators on purpose: a generator waiting for the source's
 * next value cannot be stopped before that value comes (its `return` queues behind the pending
 * `next`), and a change feed's next value may be minutes away. These forward `return` at once.
 */

/** `source`, calling `done` once when it ends however it ends (finished, failed, or stopped by its consumer). */
export function whenEnded<T>(source: AsyncIterable<T>, done: () => void): AsyncIterableIterator<T> {
  const iterator = source[Symbol.asyncIterator]();
  let ended = false;
  const end = () => {
    if (!ended) done();
    ended = true;
  };
  return {
    async next() {
      try {
        const next = await iterator.next();
        if (next.done) end();
        return next;
      } catch (error) {
        end();
        throw error;
      }
    },
    async return(value?: unknown) {
      end();
      await iterator.return?.(value);
      return { done: true, value: value as never };
    },
    async throw(error?: unknown) {
      end();
      if (iterator.throw) return iterator.throw(error);
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * `source` until `expired` resolves, then `last()` and the end: the source is told to stop without
 * waiting for it (a source waiting for its next value may only stop once it has it).
 */
export function endingWhen<T>(
  source: AsyncIterable<T>,
  expired: Promise<unknown>,
  last: () => T,
  onEnd: () => void = () => {},
): AsyncIterableIterator<T> {
  const iterator = source[Symbol.asyncIterator]();
  const expiry = expired.then(() => null);
  let finished = false;
  const finish = () => {
    if (!finished) onEnd();
    finished = true;
  };
  return whenEnded(
    {
      [Symbol.asyncIterator]: () => ({
        async next() {
          if (finished) return { done: true, value: undefined as never };
          const next = await Promise.race([iterator.next(), expiry]);
          if (next !== null) return next;
          finish();
          iterator.return?.()?.catch(() => {});
          return { done: false, value: last() };
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

/**
 * Waits for `promise` until `deadline` (ms since epoch) at most: then rejects with `onLate()`.
 * The work behind the promise goes on; only this caller stops waiting for it.
 */
export function withDeadline<T>(
  promise: Promise<T>,
  deadline: number,
  onLate: () => Error,
  now: () => number = Date.now,
): Promise<T> {
  // setTimeout fires at once for delays beyond 2^31 - 1 ms: an unbounded wait needs no timer.
  if (deadline === Infinity) return promise;
  const remaining = deadline - now();
  if (remaining <= 0) {
    promise.catch(() => undefined);
    return Promise.reject(onLate());
  }
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onLate()), remaining);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

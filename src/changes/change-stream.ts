/**
 * A subscriber's stream: items pushed by its feed wait here until the client reads them. `return`
 * (the client left) or `finish` (nothing more will come) runs `onEnd` once, which leaves the feed.
 */
export class ChangeStream<T> implements AsyncIterableIterator<T> {
  private readonly buffered: T[] = [];
  private waiting?: (result: IteratorResult<T>) => void;
  private over = false;

  constructor(private readonly onEnd: () => void) {}

  /** Whether the stream ended (the client left, or it was finished). */
  get ended(): boolean {
    return this.over;
  }

  push(items: Iterable<T>): void {
    if (this.over) return;
    for (const item of items) {
      const waiting = this.waiting;
      if (waiting) {
        this.waiting = undefined;
        waiting({ value: item, done: false });
      } else this.buffered.push(item);
    }
  }

  /** Ends the stream after what is buffered has been read. */
  finish(): void {
    this.end();
  }

  next(): Promise<IteratorResult<T>> {
    if (this.buffered.length > 0) return Promise.resolve({ value: this.buffered.shift()!, done: false });
    if (this.over) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<T>> {
    this.buffered.length = 0;
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private end(): void {
    if (this.over) return;
    this.over = true;
    if (this.buffered.length === 0) this.waiting?.({ value: undefined, done: true });
    this.waiting = undefined;
    this.onEnd();
  }
}

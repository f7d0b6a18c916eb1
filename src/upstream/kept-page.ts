/**
 * A page of a paged list as the page cache and the stale copies keep it: its bytes as received, and
 * its decoded form only while something reads it. A page of 1000 reservations is 1 MB of text,
 * 1.2 MiB parsed and 2.5 MiB once a query has read its records' contact, rooms and guests (views and
 * the values they converted); held decoded for the page's lifetime and as a stale copy, 26 such
 * pages were most of the heap under S4b, and V8 grows the heap with what it holds
 * (docs/benchmarks.md, "What holds memory under S4b"). The bytes are a Buffer, outside V8's heap.
 *
 * The decoded form is held weakly: every window reading the page holds it, so windows running at
 * once share one decoded page (and what its views converted); once none does, V8 may collect it,
 * and the next read decodes the bytes again, as the service's answer was, with no call.
 */
export class KeptPage {
  private decoded: WeakRef<object>;

  constructor(
    /** The answer's body as received (UTF-8). */
    readonly bytes: Buffer,
    decoded: object,
    /** The answer's text → its decoded value (the endpoint's response schema over the parsed JSON). */
    private readonly decode: (text: string) => object,
  ) {
    this.decoded = new WeakRef(decoded);
  }

  /** The decoded page: the one a reader holds, else decoded again from the bytes. */
  read(): object {
    let value = this.decoded.deref();
    if (value === undefined) {
      value = this.decode(this.bytes.toString('utf8'));
      this.decoded = new WeakRef(value);
    }
    return value;
  }

  /** The same list with other bytes (a page brought up to date with records read since), decoded as this one is. */
  withBytes(bytes: Buffer): KeptPage {
    return new KeptPage(bytes, this.decode(bytes.toString('utf8')), this.decode);
  }

  /** What a cache that keeps JSON (Redis) stores: the decoded page's own JSON (a LazyList's wire form). */
  toJSON(): unknown {
    const value = this.read() as { toJSON?: () => unknown };
    return typeof value.toJSON === 'function' ? value.toJSON() : value;
  }
}

/** The answer a kept value stands for: a kept page read, anything else as it is. */
export function readKept(value: unknown): unknown {
  return value instanceof KeptPage ? value.read() : value;
}

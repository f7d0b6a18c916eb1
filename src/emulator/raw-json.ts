/**
 * A body already serialized: the server sends its text as it is. Its own file because the store
 * keeps such bodies and the routes hand them out: neither imports the other for it.
 */
export class RawJson {
  private encoded?: Buffer;
  constructor(readonly text: string) {}

  get bytes(): Buffer {
    return (this.encoded ??= Buffer.from(this.text));
  }
}

/**
 * The emulator's own notion of "now". It runs at real speed from a start instant, and tests move it
 * (token expiry, retention, cut-off) through `/_emulator/clock` instead of waiting.
 * The rate limit never reads this clock: it is measured in real time (docs/upstream.md, "The emulator").
 */
export class EmulatorClock {
  private offsetMs: number;

  constructor(
    readonly startMs: number,
    private readonly realNow: () => number = Date.now,
  ) {
    this.offsetMs = startMs - realNow();
  }

  now(): number {
    return this.realNow() + this.offsetMs;
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }

  set(ms: number): void {
    this.offsetMs = ms - this.realNow();
  }

  reset(): void {
    this.set(this.startMs);
  }
}

export const DEFAULT_START = '2027-01-15T12:00:00Z';

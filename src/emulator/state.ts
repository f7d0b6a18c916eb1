import { randomBytes } from 'node:crypto';
import { EmulatorClock } from './clock.ts';
import { Faults } from './faults.ts';
import type { DemoData } from './model.ts';
import { generateDemoData } from './seed.ts';
import { Store } from './store.ts';
import type { Variations } from './variations.ts';

const TOKEN_LIFETIME_MS = 30 * 60_000;
const LOG_CAP = 200_000;

export interface LogEntry {
  at: string;
  version: string | null;
  endpoint: string;
  status: number;
  licensee: string | null;
  userAgent: string | null;
  fault: 'reset' | 'status' | 'malformed' | '429' | null;
  params: Record<string, unknown>;
}

export interface StateOptions {
  seed: number;
  startMs: number;
  /** Requests per rolling window per licensee; false turns the limit off (benchmarks). */
  rateLimit: number | false;
  rateWindowMs: number;
  /** The real-time source of the rate limit, in ms (performance.now unless given: tests drive it). */
  rateNow?: () => number;
}

/** Everything the emulator remembers; `reset()` puts it back to how it started. */
export class EmulatorState {
  readonly clock: EmulatorClock;
  readonly faults: Faults;
  store: Store;
  variations: Variations = {};
  log: LogEntry[] = [];
  private readonly data: DemoData;
  /** Whether anything changed the store since it was built: reset rebuilds only then. */
  private dirty = false;
  private tokens = new Map<string, { licensee: string; issuedMs: number }>();
  /** Real-time send instants per licensee, oldest first. */
  private windows = new Map<string, number[]>();

  constructor(readonly options: StateOptions) {
    this.clock = new EmulatorClock(options.startMs);
    this.faults = new Faults(options.seed);
    this.data = generateDemoData(options.seed, options.startMs);
    this.store = new Store(this.data);
  }

  reset(): void {
    this.clock.reset();
    this.faults.clear();
    if (this.dirty) this.store = new Store(this.data);
    this.dirty = false;
    this.variations = {};
    this.log = [];
    this.tokens.clear();
    this.windows.clear();
  }

  markDirty(): void {
    this.dirty = true;
    this.store.reservationJson.clear();
    this.store.pageJson.clear();
  }

  issueToken(licensee: string): string {
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, { licensee, issuedMs: this.clock.now() });
    return token;
  }

  /** The licensee a token acts for, or null when it is unknown, revoked or older than 30 minutes. */
  tokenLicensee(token: string): string | null {
    const t = this.tokens.get(token);
    if (!t) return null;
    if (this.clock.now() - t.issuedMs >= TOKEN_LIFETIME_MS) return null;
    return t.licensee;
  }

  /**
   * Sets the clock. Tokens expired by then are dropped first, so that moving the clock back does
   * not revive them: the real service never un-expires a token.
   */
  moveClock(toMs: number): void {
    const now = this.clock.now();
    for (const [token, issued] of this.tokens) if (now - issued.issuedMs >= TOKEN_LIFETIME_MS) this.tokens.delete(token);
    this.clock.set(toMs);
  }

  revokeTokens(): void {
    this.tokens.clear();
  }

  /**
   * Counts one processed request against the licensee's rolling window, measured in real time.
   * Returns the seconds to wait when the window is full (and then counts nothing).
   */
  admit(licensee: string): number | null {
    if (this.options.rateLimit === false) return null;
    const now = (this.options.rateNow ?? performance.now.bind(performance))();
    let sent = this.windows.get(licensee);
    if (!sent) this.windows.set(licensee, (sent = []));
    const horizon = now - this.options.rateWindowMs;
    let drop = 0;
    while (drop < sent.length && sent[drop]! <= horizon) drop++;
    if (drop > 0) sent.splice(0, drop);
    if (sent.length >= this.options.rateLimit) {
      return Math.max(1, Math.ceil((sent[0]! + this.options.rateWindowMs - now) / 1000));
    }
    sent.push(now);
    return null;
  }

  record(entry: LogEntry): void {
    this.log.push(entry);
    if (this.log.length > LOG_CAP) this.log.splice(0, this.log.length - LOG_CAP);
  }
}

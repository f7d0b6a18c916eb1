import { randomBytes } from 'node:crypto';
import { EmulatorClock } from './clock.ts';
import { Faults } from './faults.ts';
import type { DemoData } from './model.ts';
import { generateDemoData } from './seed.ts';
import { Store } from './store.ts';
import type { Variations } from './variations.ts';

const TOKEN_LIFETIME_MS = 30 * 60_000;
/** The request log keeps at most this many entries and about this many bytes, the newest. */
const LOG_CAP = 200_000;
const LOG_MAX_BYTES = 64 << 20;
/** What an entry costs beyond its parameters, endpoint and User-Agent, roughly. */
const ENTRY_BYTES = 200;

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

/**
 * The demo data of each seed and start, generated once a process: generating 28,000 reservations
 * takes half a second, and the data is only read (each Store copies what it may change), so the
 * emulators of one process (a test run starts hundreds) share it. The last few are kept.
 */
const demoData = new Map<string, DemoData>();
const DEMO_DATA_KEPT = 4;

export function demoDataFor(seed: number, startMs: number): DemoData {
  const key = `${seed}@${startMs}`;
  let data = demoData.get(key);
  if (!data) {
    data = generateDemoData(seed, startMs);
    if (demoData.size >= DEMO_DATA_KEPT) demoData.delete(demoData.keys().next().value!);
    demoData.set(key, data);
  }
  return data;
}

/** Everything the emulator remembers; `reset()` puts it back to how it started. */
export class EmulatorState {
  readonly clock: EmulatorClock;
  readonly faults: Faults;
  store: Store;
  variations: Variations = {};
  private entries: LogEntry[] = [];
  private logBytes = 0;
  private readonly entryBytes = new WeakMap<LogEntry, number>();
  private readonly data: DemoData;
  /** Whether anything changed the store since it was built: reset rebuilds only then. */
  private dirty = false;
  private tokens = new Map<string, { licensee: string; issuedMs: number; uses: number }>();
  /** Real-time send instants per licensee, oldest first. */
  private windows = new Map<string, number[]>();

  constructor(readonly options: StateOptions) {
    this.clock = new EmulatorClock(options.startMs);
    this.faults = new Faults(options.seed);
    this.data = demoDataFor(options.seed, options.startMs);
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
    this.tokens.set(token, { licensee, issuedMs: this.clock.now(), uses: 0 });
    return token;
  }

  /**
   * The licensee a token acts for, or null when it is unknown, revoked or older than 30 minutes.
   * Counts the use; with `revokeAfterUses`, a token that already served that many is revoked now.
   */
  tokenLicensee(token: string, revokeAfterUses?: number): string | null {
    const t = this.tokens.get(token);
    if (!t) return null;
    if (this.clock.now() - t.issuedMs >= TOKEN_LIFETIME_MS) return null;
    if (revokeAfterUses !== undefined && t.uses >= revokeAfterUses) {
      this.tokens.delete(token);
      return null;
    }
    t.uses++;
    return t.licensee;
  }

  /**
   * Sets the clock. Tokens expired by then are dropped first, so that moving the clock back does
   * not revive them: the real service never un-expires a token.
   */
  moveClock(toMs: number): void {
    const now = this.clock.now();
    for (const [token, issued] of this.tokens)
      if (now - issued.issuedMs >= TOKEN_LIFETIME_MS) this.tokens.delete(token);
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

  /** The request log, oldest first. */
  get log(): LogEntry[] {
    return this.entries;
  }

  /** Tests empty the log by assigning it. */
  set log(entries: LogEntry[]) {
    this.entries = entries;
    this.logBytes = entries.reduce((sum, entry) => sum + this.sizeOf(entry), 0);
  }

  record(entry: LogEntry): void {
    this.entries.push(entry);
    this.logBytes += this.sizeOf(entry);
    if (this.entries.length > LOG_CAP || this.logBytes > LOG_MAX_BYTES) this.trimLog();
  }

  private sizeOf(entry: LogEntry): number {
    let size = this.entryBytes.get(entry);
    if (size === undefined) {
      size = ENTRY_BYTES + JSON.stringify(entry.params).length + entry.endpoint.length + (entry.userAgent?.length ?? 0);
      this.entryBytes.set(entry, size);
    }
    return size;
  }

  /** Drops the oldest tenth or so at once, so that trimming costs little per request. */
  private trimLog(): void {
    let drop = 0;
    let freed = 0;
    while (
      drop < this.entries.length &&
      (this.entries.length - drop > LOG_CAP * 0.9 || this.logBytes - freed > LOG_MAX_BYTES * 0.9)
    ) {
      freed += this.sizeOf(this.entries[drop]!);
      drop++;
    }
    this.entries.splice(0, drop);
    this.logBytes -= freed;
  }
}

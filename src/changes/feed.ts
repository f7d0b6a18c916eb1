import type { ReservationModel } from '../resolvers/models.ts';
import { readOrNull } from '../upstream/record-view.ts';
import { changesAmong, instantOf, type ReservationChange, type SeenRecord } from './change.ts';

/** Reads an event's reservations for a feed: every page, as the service holds them now. */
export interface FeedSource {
  /** Records modified at or after `modifiedAfter` (ISO; the service compares whole minutes), or all of them. */
  read(modifiedAfter?: string): Promise<ReservationModel[]>;
}

export type ChangeListener = (changes: readonly ReservationChange[]) => void;

export interface ChangeFeedOptions {
  source: FeedSource;
  /** CHANGES_POLL_INTERVAL_MS. */
  intervalMs: number;
  /** Share of the licensee's budget used in the current window (1 = all of it). */
  budgetUsed: () => Promise<number>;
  /** Told of changes before subscribers are (the gateway drops cached reservation pages). */
  onChanges?: (changes: readonly ReservationChange[]) => void;
  /** Told of a poll that failed; the feed polls again at the next interval. */
  onPollError?: (error: unknown) => void;
  /**
   * The service's clock (ms), for the instant a fresh feed starts. Without it, every record the
   * baseline read sees is known (what changed during the read is not told).
   */
  serviceNow?: () => number;
}

/** What a feed knows: enough for another replica's feed to go on where it stopped. */
export interface FeedState {
  seen: Map<number, SeenRecord>;
  latest: number;
  baseline: number;
}

/**
 * Where a feed starts. Without one: a baseline read, whose records are all known already. `resume`:
 * where another feed stopped, with no read (the next poll looks back from its latest). `heardUpTo`:
 * a baseline read where the records modified in or after that minute are changes still to tell
 * (a replica that heard the changes up to there from another's feed and must now poll itself).
 */
export type FeedStart = { resume: FeedState } | { heardUpTo: number };

/** Over this share of the budget used, polling slows down: interactive queries come first. */
export const TIGHT_BUDGET = 0.8;
/** How much longer the interval gets while the budget is tight. */
export const STRETCH_FACTOR = 4;

/**
 * The modification filter goes back one minute before the latest change seen: the service keeps
 * minutes only, and a clock edge between its write and our read must not lose a change.
 */
const LOOK_BACK_MS = 60_000;

/**
 * One poller of one licensee's event: a baseline read of every record, then, each interval, the
 * records modified since the latest modification seen (the service's clock, never ours), each
 * change told to the listeners once, in modification order (see change.ts for what a change is).
 */
export class ChangeFeed {
  private readonly seen = new Map<number, SeenRecord>();
  private readonly listeners = new Set<ChangeListener>();
  /** The latest modification time seen, on the service's clock (-Infinity: none yet). */
  private latest = -Infinity;
  /** Records made at or after this are CREATED when first seen. */
  private baseline = -Infinity;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private polls = 0;

  constructor(private readonly options: ChangeFeedOptions) {}

  /**
   * The baseline read (see FeedStart); polling starts after it. Rejects when the read fails (an
   * unknown event). A fresh feed starts at the instant it was asked for (its first subscriber was
   * accepted), on the service's clock: a record modified at or after it was changed after the
   * subscriber came, and is told even when the baseline read, which takes a while on a large
   * event, already saw it.
   */
  async start(from?: FeedStart): Promise<void> {
    if (from && 'resume' in from) {
      for (const [number, record] of from.resume.seen) this.seen.set(number, record);
      this.latest = from.resume.latest;
      this.baseline = from.resume.baseline;
      return void this.schedule();
    }
    const askedAt = Date.now();
    const records = await this.options.source.read();
    if (this.stopped) return;
    const { serviceNow } = this.options;
    // The service's clock is known once the read's answers dated it: its "now" when we were asked.
    const startedAt = from?.heardUpTo ?? (serviceNow ? serviceNow() - (Date.now() - askedAt) : Infinity);
    // The service keeps minutes: a record of the minute last heard of may have changed after it.
    const heardUpTo = Math.floor(startedAt / 60_000) * 60_000;
    const known: ReservationModel[] = [];
    const toTell: ReservationModel[] = [];
    for (const record of records)
      (instantOf(readOrNull(record, 'modifiedDate')) < heardUpTo ? known : toTell).push(record);
    changesAmong(known, this.seen, Infinity);
    for (const record of known) this.latest = Math.max(this.latest, instantOf(readOrNull(record, 'modifiedDate')));
    // Made in or after the minute it started: CREATED when first seen (the service's minutes).
    this.baseline = from ? from.heardUpTo : heardUpTo === Infinity ? this.latest : heardUpTo;
    this.tell(changesAmong(toTell, this.seen, this.baseline));
    void this.schedule();
  }

  /**
   * Records as the service holds them right after our own write: told at once as the changes they
   * are (no poll needed), and known from then on, so the poll that later reads them tells nothing.
   */
  record(records: readonly ReservationModel[]): void {
    if (this.stopped) return;
    this.tell(changesAmong(records, this.seen, this.baseline));
  }

  /** What the feed knows now (the map is the feed's own: read it before the next poll). */
  state(): FeedState {
    return { seen: this.seen, latest: this.latest, baseline: this.baseline };
  }

  /** The latest modification time the feed has seen, on the service's clock (ms; -Infinity for none). */
  latestModification(): number {
    return this.latest;
  }

  /** Polls done since the baseline (status page, tests). */
  pollCount(): number {
    return this.polls;
  }

  /** What this poller holds now: its listeners, its pending poll timer (0 or 1), the records it knows. */
  footprint(): { listeners: number; timers: number; known: number } {
    return { listeners: this.listeners.size, timers: this.timer ? 1 : 0, known: this.seen.size };
  }

  listen(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The next poll's delay: the interval, stretched while the licensee's budget is tight. */
  async nextDelayMs(): Promise<number> {
    const used = await this.options.budgetUsed().catch(() => 0);
    return used > TIGHT_BUDGET ? this.options.intervalMs * STRETCH_FACTOR : this.options.intervalMs;
  }

  /** One poll: reads what changed since the latest modification seen and tells the listeners. */
  async poll(): Promise<void> {
    const since = this.latest === -Infinity ? undefined : new Date(this.latest - LOOK_BACK_MS).toISOString();
    const records = await this.options.source.read(since);
    this.polls++;
    if (this.stopped) return;
    this.tell(changesAmong(records, this.seen, this.baseline));
  }

  private tell(changes: readonly ReservationChange[]): void {
    for (const change of changes) this.latest = Math.max(this.latest, instantOf(change.modifiedAt));
    if (changes.length === 0) return;
    this.options.onChanges?.(changes);
    for (const listener of this.listeners) listener(changes);
  }

  private async schedule(): Promise<void> {
    const delay = await this.nextDelayMs();
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.poll()
        .catch((error: unknown) => this.options.onPollError?.(error))
        .finally(() => void (this.stopped || this.schedule()));
    }, delay);
  }
}

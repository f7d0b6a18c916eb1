import { readOrNull } from '../upstream/record-view.ts';
import type { ReservationModel } from '../upstream/records.ts';
import {
  changesAmong,
  contentHash,
  inModificationOrder,
  instantOf,
  type ReservationChange,
  remember,
  type SeenRecord,
} from './change.ts';

/** Reads an event's reservations for a feed: every page, as the service holds them now. */
export interface FeedSource {
  /** Records modified at or after `modifiedAfter` (ISO; the service compares whole minutes), or all of them. */
  read(modifiedAfter?: string): Promise<ReservationModel[]>;
  /**
   * The same, page by page from `firstPage` (1 without it): a feed lets each page go once it has
   * compared it, and reads a failed page again from there. Without it, `read` is one page.
   */
  pages?(modifiedAfter?: string, firstPage?: number): AsyncIterable<readonly ReservationModel[]>;
}

async function* pagesOf(
  source: FeedSource,
  modifiedAfter?: string,
  firstPage = 1,
): AsyncIterable<readonly ReservationModel[]> {
  if (source.pages) yield* source.pages(modifiedAfter, firstPage);
  else yield await source.read(modifiedAfter);
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
   * How long to wait before reading a page of the baseline again after its `attempt`-th failure
   * (ms), or undefined to fail the start (and every subscriber waiting on it); `polling`: the
   * feed polls already (the read is past its first page). Without it, the first failure fails the start.
   */
  baselineRetryMs?: (error: unknown, attempt: number, polling: boolean) => number | undefined;
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
 * `askedAt`: a fresh baseline read, as if started at that earlier instant of our clock (when the
 * first subscriber came: it is told what changed after, even what changed before the read began;
 * see `start` for the minute it came in). `missed`: that replica may have missed changes told
 * since then: every record modified from that minute on is told, as with `heardUpTo`.
 */
export type FeedStart = { resume: FeedState } | { heardUpTo: number } | { askedAt: number; missed?: boolean };

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
 * How far the service's clock as we know it (its `Date` headers: whole seconds, read after a
 * network trip) may be ahead of the service's own: a read is taken to have begun this much earlier.
 */
const CLOCK_MARGIN_MS = 2_000;
/**
 * The service's clock, read at a poll, earlier by more than this than the previous poll's reading
 * and the time passed since predict: it stepped back (an NTP correction, a failover to a server
 * whose clock lags), and what it writes now is dated before what the feed has seen.
 */
const STEP_BACK_MS = 5_000;
/**
 * A fresh feed's first page and the read of the minute after it, answered within this of its first
 * subscriber's arrival, are the service as that subscriber found it. A change made in that time
 * may be taken for what was there: the soak owes a subscriber the changes sent a second after it
 * was accepted (bench/compare/soak.ts, OWED_AFTER_MS).
 */
const JOIN_READ_MS = 1_000;
const minuteOf = (ms: number) => Math.floor(ms / 60_000) * 60_000;

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
  /**
   * Every modification made before this instant (the service's clock) was in a read the feed
   * finished: the next poll need not look further back than its minute (-Infinity: not known).
   */
  private covered = -Infinity;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private polls = 0;
  /** When (our clock) the latest read the feed finished began (-Infinity: none yet). */
  private lastReadBegan = -Infinity;
  /** Ends the wait before a failed baseline page is read again. */
  private cancelWait?: () => void;
  /** The baseline read has finished, or the feed resumed another's state (see `baselineRead`). */
  private knowsAll = false;
  /** Polling began while the baseline read goes on (see `start`). */
  private readingBaseline = false;
  /**
   * Records a poll first saw cancelled, made before the baseline, while the baseline read had not
   * reached them: CANCELLED or CHANGED depends on what that read finds, so they are told after it.
   */
  private readonly undecided = new Map<number, ReservationModel>();
  /**
   * Records of the minute a fresh feed's first subscriber came in, first seen by its first page or
   * the read right after it (see `start`): whether they are the service as that subscriber found it
   * is decided once that read is answered.
   */
  private readonly foundAtJoin = new Map<number, ReservationModel>();
  /**
   * Records a fresh feed knows as its first subscriber found them though they were modified in the
   * minute it came: the service keeps minutes, so whether they changed just before it came or just
   * after is not known, and they are not told. Our own write that made that very state is after
   * it, and tells it (see `record`).
   */
  private readonly untold = new Set<number>();
  /**
   * A fresh feed's records modified from this instant on (the service's clock: the minute after the
   * one its first subscriber came in, that clock a little ahead of ours as known) changed after it
   * came, however long after it the feed read them.
   */
  private toldFrom = Infinity;
  /** The service's clock at the start of the latest two reads the feed finished, and ours then (ms), latest last. */
  private readonly asked: { service: number; ours: number }[] = [];
  /** The service's clock stepped back, and has not yet passed the latest change seen again. */
  private clockBehind = false;

  constructor(private readonly options: ChangeFeedOptions) {}

  /**
   * The baseline read (see FeedStart). Rejects when the read fails (an unknown event). A fresh feed
   * starts at the instant it was asked for (its first subscriber was accepted), on the service's
   * clock: its first page and a read of that minute right after it are the service as that
   * subscriber found it (see `decideAtJoin`), and a record modified after them is a change, told
   * even when the rest of the baseline read, which takes a while on a large event, sees it. Once the first
   * page has dated the read (the service's clock known), polling begins beside the rest of it: a
   * large event's baseline (26 pages for 25,600 reservations, in the background lane of a spent
   * budget: minutes) must not hold back the changes its subscribers wait for. The polls then tell
   * everything modified from that minute on, and the rest of the read only learns what was there
   * before (a record a poll already saw is left as the poll saw it).
   */
  async start(from?: FeedStart): Promise<void> {
    if (from && 'resume' in from) {
      for (const [number, record] of from.resume.seen) this.seen.set(number, record);
      this.latest = from.resume.latest;
      this.baseline = from.resume.baseline;
      this.knowsAll = true;
      return void this.schedule();
    }
    const askedAt = from && 'askedAt' in from ? Math.min(from.askedAt, Date.now()) : Date.now();
    const began = Date.now();
    const heard = from && 'heardUpTo' in from ? from.heardUpTo : undefined;
    const missed = heard !== undefined || (from !== undefined && 'askedAt' in from && from.missed === true);
    const { serviceNow } = this.options;
    let asked: number | undefined;
    let heardUpTo = Infinity;
    const toTell: ReservationModel[] = [];
    // Page by page: what is known is remembered (number, hash) and each page let go before the next.
    for await (const page of this.baselinePages()) {
      if (this.stopped) return;
      if (asked === undefined) {
        // The service's clock is known once the read's first answer dated it: its "now" when we were asked.
        asked = serviceNow ? serviceNow() - (Date.now() - askedAt) : Infinity;
        // The service keeps minutes: a record of the minute last heard of may have changed after it.
        heardUpTo = minuteOf(heard ?? asked);
        if (asked !== Infinity) this.asked.push({ service: asked, ours: askedAt });
        if (!missed) this.toldFrom = minuteOf(asked + CLOCK_MARGIN_MS) + 60_000;
      }
      const known: ReservationModel[] = [];
      let fresh: ReservationModel[] = [];
      for (const record of page) {
        const modified = instantOf(readOrNull(record, 'modifiedDate'));
        if (modified < heardUpTo) {
          if (!this.seen.has(record.reservationNumber)) known.push(record);
          this.latest = Math.max(this.latest, modified);
        } else fresh.push(record);
      }
      remember(known, this.seen);
      if (!this.readingBaseline && heardUpTo !== Infinity) {
        // Made in or after the minute it started: CREATED when first seen (the service's minutes).
        this.baseline = heard ?? heardUpTo;
        // The polls read from that minute on.
        this.covered = heardUpTo;
        this.readingBaseline = true;
        if (!missed) {
          // A fresh feed: the first page, and right after it the rest of the minute the first
          // subscriber came in, are the service as that subscriber found it, when answered at once.
          // Told, a record of that minute would be a change that never happened after it came; a
          // record of that minute first seen by a later page or poll was not there then, and is one.
          fresh = this.findAtJoin(fresh);
          await this.readJoinMinute();
          if (this.stopped) return;
          this.decideAtJoin(Date.now() - askedAt <= JOIN_READ_MS);
        }
        void this.schedule();
      }
      if (!this.readingBaseline) toTell.push(...fresh);
      else {
        // Told now; a record a poll already saw is left as the poll saw it (this page may be older).
        const unseen = fresh.filter((record) => !this.seen.has(record.reservationNumber));
        this.tell(changesAmong(this.decidable(unseen), this.seen, this.baseline));
      }
    }
    if (this.stopped) return;
    this.lastReadBegan = Math.max(this.lastReadBegan, began);
    this.knowsAll = true;
    if (this.readingBaseline) {
      this.readingBaseline = false;
      const undecided = [...this.undecided.values()];
      this.undecided.clear();
      return this.tell(changesAmong(undecided, this.seen, this.baseline));
    }
    if (asked !== undefined && asked !== Infinity) this.covered = asked - CLOCK_MARGIN_MS;
    this.baseline = heard ?? (heardUpTo === Infinity ? this.latest : heardUpTo);
    this.tell(changesAmong(toTell, this.seen, this.baseline));
    void this.schedule();
  }

  /** Whether the baseline read has finished (or a resumed feed needed none): until then the feed's state is not all there is to know. */
  baselineRead(): boolean {
    return this.knowsAll;
  }

  /**
   * Keeps the records of the first subscriber's minute first seen now (see `foundAtJoin`); answers
   * the others to compare: those known already, those of a later minute (see `toldFrom`), and those
   * found before in another state (they changed since the first page).
   */
  private findAtJoin(records: readonly ReservationModel[]): ReservationModel[] {
    const compared: ReservationModel[] = [];
    for (const record of records) {
      const number = record.reservationNumber;
      const found = this.foundAtJoin.get(number);
      if (this.seen.has(number) || instantOf(readOrNull(record, 'modifiedDate')) >= this.toldFrom)
        compared.push(record);
      else if (!found) this.foundAtJoin.set(number, record);
      else if (contentHash(found) !== contentHash(record)) {
        this.foundAtJoin.delete(number);
        compared.push(record);
      }
    }
    return compared;
  }

  /**
   * What the first page and the read after it found of the first subscriber's minute: the service
   * as that subscriber found it when answered within JOIN_READ_MS of its arrival (known, not told),
   * else changes (a read that waited, for the budget or for another replica, may have found what
   * changed after it came: told rather than lost). A record our own write told meanwhile is known.
   */
  private decideAtJoin(prompt: boolean): void {
    const found = [...this.foundAtJoin.values()].filter((record) => !this.seen.has(record.reservationNumber));
    this.foundAtJoin.clear();
    if (!prompt) return this.tell(changesAmong(this.decidable(found), this.seen, this.baseline));
    remember(found, this.seen);
    for (const record of found) {
      this.untold.add(record.reservationNumber);
      this.latest = Math.max(this.latest, instantOf(readOrNull(record, 'modifiedDate')));
    }
  }

  /**
   * A fresh feed's first poll, right after the first page: what it first sees is known as the first
   * subscriber found it, what changed since the first page is told. Read again after a failure, as
   * a baseline page is.
   */
  private async readJoinMinute(): Promise<void> {
    for (let failures = 0; ; ) {
      try {
        return await this.poll(true);
      } catch (error) {
        const delay = this.options.baselineRetryMs?.(error, ++failures, true);
        if (delay === undefined || this.stopped) throw error;
        await this.pause(delay);
        if (this.stopped) return;
      }
    }
  }

  /** Waits before a read is tried again, cut short by `stop` (a wait may be a whole window). */
  private async pause(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.cancelWait = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.cancelWait = undefined;
  }

  /**
   * Every page of the baseline read; a page that fails is read again after `baselineRetryMs`
   * (pages already read are not), so that a passing fault (a 5xx, a revoked token, a spent
   * budget) does not end every subscriber waiting on the feed.
   */
  private async *baselinePages(): AsyncIterable<readonly ReservationModel[]> {
    let next = 1;
    for (let failures = 0; ; ) {
      try {
        for await (const page of pagesOf(this.options.source, undefined, next)) {
          next++;
          failures = 0;
          yield page;
        }
        return;
      } catch (error) {
        const delay = this.options.baselineRetryMs?.(error, ++failures, this.readingBaseline);
        if (delay === undefined || this.stopped) throw error;
        await this.pause(delay);
        if (this.stopped) return;
      }
    }
  }

  /**
   * Records as the service holds them right after our own write: told at once as the changes they
   * are (no poll needed), and known from then on, so the poll that later reads them tells nothing.
   * A record known in this very state as the first subscriber found it (`untold`) is told too:
   * our write made that state, and the write came after the subscriber.
   */
  record(records: readonly ReservationModel[]): void {
    if (this.stopped) return;
    for (const record of records) if (this.madeByOwnWrite(record)) this.seen.delete(record.reservationNumber);
    this.tell(changesAmong(records, this.seen, this.baseline));
  }

  /**
   * Our own writes heard before this feed polled (another replica polled then): of these, only
   * the records left untold in the very state the write made are told (an older state of any other
   * record is no change).
   */
  recordOwed(records: readonly ReservationModel[]): void {
    this.record(records.filter((record) => this.madeByOwnWrite(record)));
  }

  private madeByOwnWrite(record: ReservationModel): boolean {
    return (
      this.untold.has(record.reservationNumber) && this.seen.get(record.reservationNumber)?.hash === contentHash(record)
    );
  }

  /** What the feed knows now (the map is the feed's own: read it before the next poll). */
  state(): FeedState {
    return { seen: this.seen, latest: this.latest, baseline: this.baseline };
  }

  /** The latest modification time the feed has seen, on the service's clock (ms; -Infinity for none). */
  latestModification(): number {
    return this.latest;
  }

  /**
   * When (our clock, ms) the latest read the feed finished began: every change made before then
   * has been told (-Infinity: no read finished yet).
   */
  readBegan(): number {
    return this.lastReadBegan;
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
    this.cancelWait?.();
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The next poll's delay: the interval, stretched while the licensee's budget is tight. */
  async nextDelayMs(): Promise<number> {
    const used = await this.options.budgetUsed().catch(() => 0);
    return used > TIGHT_BUDGET ? this.options.intervalMs * STRETCH_FACTOR : this.options.intervalMs;
  }

  /**
   * One poll: reads what changed since the latest modification seen and tells the listeners.
   * `atJoin`: a fresh feed's first (see `readJoinMinute`).
   */
  async poll(atJoin = false): Promise<void> {
    const began = Date.now();
    const asked = this.options.serviceNow?.();
    const from = this.pollFrom(began, asked);
    const since = from === -Infinity ? undefined : new Date(from).toISOString();
    const changes: ReservationChange[] = [];
    let stopped = false;
    for await (const page of pagesOf(this.options.source, since)) {
      if ((stopped = this.stopped)) break;
      // A record read again as it was is known by its hash: nothing of it is kept.
      const compared = atJoin ? this.findAtJoin(page) : page;
      changes.push(...changesAmong(this.decidable(compared), this.seen, this.baseline));
    }
    this.polls++;
    if (stopped || this.stopped) return;
    this.lastReadBegan = began;
    if (asked !== undefined) {
      // After a step back, what the read covers is dated on the clock as it is now.
      this.covered =
        from < minuteOf(this.covered) ? asked - CLOCK_MARGIN_MS : Math.max(this.covered, asked - CLOCK_MARGIN_MS);
      this.asked.push({ service: asked, ours: began });
      if (this.asked.length > 2) this.asked.shift();
    }
    this.tell(changes.sort(inModificationOrder));
  }

  /**
   * Where a poll reads from: back one minute before the latest change seen, and no further back
   * than the minute of the last read finished (with nothing new, that read's minute holds nothing:
   * one short page). The feed never assumes the service's clock only moves on: when it stepped
   * back (it reads earlier than the last read's reading and the time passed since predict), the
   * poll reads from where the clock may have stepped to, and until it has passed the latest change
   * seen again, from the last read's minute on the clock as it is now. A record read again as it
   * was is no change, so nothing is told twice.
   */
  private pollFrom(began: number, asked: number | undefined): number {
    const last = this.asked.at(-1);
    if (asked !== undefined && last && asked < last.service + (began - last.ours) - STEP_BACK_MS) {
      this.clockBehind = true;
      // The clock is known from the latest answer's Date: the read before the last one may already
      // have been dated on the old clock, and answered on the new. The step came after it began.
      const before = this.asked[0]!;
      return minuteOf(asked - (began - before.ours) - CLOCK_MARGIN_MS);
    }
    this.clockBehind &&= asked !== undefined && asked + CLOCK_MARGIN_MS < this.latest;
    return this.clockBehind ? minuteOf(this.covered) : Math.max(this.latest - LOOK_BACK_MS, minuteOf(this.covered));
  }

  /**
   * The records of a poll whose kind can be told now. While the baseline read goes on, a record
   * first seen cancelled, made before the baseline, may have been cancelled long before (CHANGED)
   * or just now (CANCELLED): it waits for the read, the latest state read of it kept.
   */
  private decidable(page: readonly ReservationModel[]): readonly ReservationModel[] {
    if (!this.readingBaseline) return page;
    return page.filter((record) => {
      const undecided =
        !this.seen.has(record.reservationNumber) &&
        readOrNull(record, 'status') === 'cancelled' &&
        instantOf(readOrNull(record, 'createdDate')) < this.baseline;
      if (undecided) this.undecided.set(record.reservationNumber, record);
      return !undecided;
    });
  }

  private tell(changes: readonly ReservationChange[]): void {
    for (const change of changes) {
      this.latest = Math.max(this.latest, instantOf(change.modifiedAt));
      this.untold.delete(change.reservation.reservationNumber);
    }
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

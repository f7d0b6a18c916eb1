import { RateLimitedError, UpstreamUnavailableError } from './errors.ts';

/**
 * The per-licensee request budget: at most `limit × (1 − margin)` sends in any rolling window.
 * A true rolling window (a log of send times), not rate-limiter-flexible's fixed windows, which let
 * twice the limit through across a window boundary (docs/architecture.md, "Rate budget"). Callers
 * wait in a fair FIFO queue by priority: writes first, which keep a share of the window reads never
 * take (WRITE_SHARE), then interactive calls (first pages, counts, lookups), then deep pages, then
 * background ones (the change feeds' polling, read-ahead), which keep a floor of the window
 * (BACKGROUND_SHARE) however busy the other reads; one whose place in the queue cannot come before its deadline is refused at once with
 * RATE_LIMITED and the time its slot would come, rather than after waiting its deadline out.
 */

/**
 * Where send times live: memory here, Redis when replicas share one budget. A slot counts from
 * when it is taken until a window after its call finished: the service counts a request when it
 * arrives, which is after we send it and before we hear back, so a call still in flight never
 * leaves the window (network and connection-setup delays cannot push two windows' worth together).
 */
export interface BudgetStore {
  /**
   * Takes a slot at `now` if fewer than `limit` are counted; else says when one frees (Infinity:
   * when a call finishes). `lane`: which side of the background lane's floor the call is on, for a
   * store shared by replicas (see BackgroundLane); a store of one replica may ignore it, the
   * budget's queue keeps the floor there by its order. None for a write: the floor is kept from
   * the other reads, not from writes (WRITE_SHARE).
   */
  take(
    licensee: string,
    now: number,
    limit: number,
    windowMs: number,
    lane?: BackgroundLane,
  ): Promise<{ taken: true; slot: string } | { taken: false; freeAt: number }>;
  /** The call of this slot finished at `at`: from then on the slot leaves the window after windowMs. */
  finish(licensee: string, slot: string, at: number): Promise<void>;
  /** When each counted slot leaves the window, soonest first (Infinity for calls in flight). */
  freeTimes(licensee: string, now: number, windowMs: number): Promise<number[]>;
  /**
   * Optional, for a store shared by replicas: told when another replica's call finished, so that
   * waiters which found every slot in flight (no time to wake at) look again.
   */
  onSlotFreed?(listener: (licensee: string) => void): void;
}

/**
 * The background lane's floor across replicas. One replica polls a feed (the lease's holder) while
 * every replica's users spend the same budget, and its queue alone cannot keep the floor: each slot
 * that frees goes to whichever replica takes it first, and the other replicas' users are many. So
 * a shared store keeps `floor` slots of each window for background calls while any replica's
 * background calls asked for a slot in the last LANE_ASK_WINDOWS windows: a background take counts
 * against the floor, and every other take counts up to `limit` less what is left of the floor. One
 * replica's store does the same: the queue's order alone kept no slot back, and users who fill the
 * window in its first seconds left a poll arriving later no slot before its deadline (a live event:
 * every poll refused, no change told).
 */
/**
 * How long the lane keeps its floor after a background call asked for a slot, in windows: a feed
 * polls at most every four intervals while the budget is tight (STRETCH_FACTOR: a minute at the
 * default 15 s), and the floor must still be there for its next poll.
 */
export const LANE_ASK_WINDOWS = 2;

export interface BackgroundLane {
  background: boolean;
  /** Slots a window kept for background calls (BACKGROUND_SHARE of the limit). */
  floor: number;
}

interface SlotEntry {
  id: string;
  /** When the call finished; undefined while it is in flight. */
  finishedAt?: number;
}

export class MemoryBudgetStore implements BudgetStore {
  private readonly slots = new Map<string, SlotEntry[]>();
  /** Per licensee, the background lane: its takes in the window and its last ask (BackgroundLane). */
  private readonly lanes = new Map<string, { takes: number[]; askedAt: number }>();
  private next = 0;

  async take(licensee: string, now: number, limit: number, windowMs: number, lane?: BackgroundLane) {
    const slots = this.prune(licensee, now, windowMs);
    const held = this.laneOf(licensee, now, windowMs);
    let allowed = limit;
    if (lane?.background) held.askedAt = now;
    else if (lane && lane.floor > 0 && now - held.askedAt < LANE_ASK_WINDOWS * windowMs) {
      const left = lane.floor - held.takes.length;
      if (left > 0) allowed = Math.max(1, limit - left);
    }
    if (slots.length < allowed) {
      const id = String(++this.next);
      slots.push({ id });
      if (lane?.background) held.takes.push(now);
      return { taken: true as const, slot: id };
    }
    const frees = freeTimes(slots, windowMs);
    return { taken: false as const, freeAt: frees[slots.length - allowed]! };
  }

  private laneOf(licensee: string, now: number, windowMs: number) {
    let lane = this.lanes.get(licensee);
    if (!lane) this.lanes.set(licensee, (lane = { takes: [], askedAt: -Infinity }));
    lane.takes = lane.takes.filter((at) => at > now - windowMs);
    return lane;
  }

  async finish(licensee: string, slot: string, at: number) {
    const entry = this.slots.get(licensee)?.find((s) => s.id === slot);
    if (entry) entry.finishedAt = at;
  }

  async freeTimes(licensee: string, now: number, windowMs: number) {
    return freeTimes(this.prune(licensee, now, windowMs), windowMs);
  }

  private prune(licensee: string, now: number, windowMs: number): SlotEntry[] {
    let slots = this.slots.get(licensee);
    if (!slots) this.slots.set(licensee, (slots = []));
    const kept = slots.filter((s) => s.finishedAt === undefined || s.finishedAt > now - windowMs);
    if (kept.length !== slots.length) this.slots.set(licensee, (slots = kept));
    return slots;
  }
}

function freeTimes(slots: SlotEntry[], windowMs: number): number[] {
  return slots.map((s) => (s.finishedAt === undefined ? Infinity : s.finishedAt + windowMs)).sort((a, b) => a - b);
}

/**
 * Who goes first among reads when the queue must choose (writes go before them all, BudgetPriority):
 * `interactive` (what a user waits to see first: first pages, counts, lookups), then `deep` (pages
 * past the first of a list), then `background` (the change feeds' polling, a subscription's replay,
 * read-ahead), then `bulk` (a feed's baseline read: every page of an event). Stable within a class: FIFO. `background` and `bulk` share the
 * background lane's floor, `background` first: a baseline of 26 pages took the floor's every slot
 * and the polls of the feeds already running were refused (S9: 79 of them in 6 minutes).
 */
export type CallPriority = 'interactive' | 'deep' | 'background' | 'bulk';

/**
 * A place in the queue: a read's CallPriority, or `write`, ahead of every read. Not a caller's
 * choice: the budget layer gives it to the calls of write endpoints (and to authenticate).
 */
export type BudgetPriority = 'write' | CallPriority;

/** A moved background call ranks -1 (rankOf): behind writes, ahead of every other read. */
const RANK: Record<BudgetPriority, number> = { write: -2, interactive: 0, deep: 1, background: 2, bulk: 3 };

/**
 * A read-ahead takes a slot only while, counting it, no more than this share of the licensee's
 * window is used: the rest stays for the calls users wait for (the change feeds slow down at the
 * same share, changes/feed.ts).
 */
export const HEADROOM_SHARE = 0.8;

/**
 * The background lane's floor: while interactive calls keep the budget busy, queued background
 * calls (the change feeds' polls, a subscription's replay) still get up to this share of the
 * licensee's window, each going ahead of the calls queued behind it. Without it a spent budget
 * starved the feeds: a change was told a minute late, after its subscriber had gone. At the real
 * 240 a minute, 21 calls a minute: three events polled at the stretched interval (changes/feed.ts).
 */
export const BACKGROUND_SHARE = 0.1;

/**
 * Writes first: a write is a person's action, and reads must not spend the budget it needs (in a
 * live event 19 of 40 `upsertAttendee` were refused because reads had). A read takes a slot only
 * while the window, writes included, holds fewer than the limit less this share; a write, while it
 * holds fewer than the limit; and writes queue ahead of every read. A share rather than the queue's
 * order alone: a slot counts for a window once taken, so a write first in the queue behind a burst
 * of reads (one costly query is 120 calls) would wait for the oldest of them to leave the window,
 * past its deadline. And a share is a limit each take passes, as the read-ahead's headroom is: the
 * shared store counts every replica's slots against it, so it holds across replicas with no change
 * to the stores (each replica keeps it within its own share while Redis is away), and while writes
 * hold more than the share, every slot that frees on any replica goes to them, reads waiting until
 * the share is free again. A write is refused only when writes alone exceed that: more than the
 * share at once while reads hold the rest, or more than the budget. 22 slots a minute at the real
 * 240 less its margin, which reads lose when nobody writes; none below 10 a window.
 */
export const WRITE_SHARE = 0.1;

interface Waiter {
  deadline: number;
  priority: BudgetPriority;
  /** Served only if a slot is free at once within the headroom share; refused rather than queued. */
  onlyIfFree?: boolean;
  /** A background call moved ahead within the background lane's floor (BACKGROUND_SHARE). */
  promoted?: boolean;
  resolve: (slot: string) => void;
  reject: (error: Error) => void;
  /** Fires at the deadline; none for a waiter without one. */
  timer?: NodeJS.Timeout;
}

interface Queue {
  waiters: Waiter[];
  pausedUntil: number;
  wakeAt: number;
  wake?: NodeJS.Timeout;
  pumping: boolean;
  /** After a 429 without Retry-After: one call at a time until one is answered. */
  probing: boolean;
  /** The pause before the next probe; doubles with each probe answered 429. */
  backoffMs: number;
  /** The slot of the probe in flight; nothing else starts meanwhile. */
  probeSlot?: string;
  /** Sends allowed per window for this licensee, the margin taken off (its own rateLimit). */
  effectiveLimit: number;
  /**
   * When callers refused at once were told to come back, still ahead: each holds a place after the
   * queue, so that a burst refused together is told to return spread over the windows it needs.
   */
  promised: number[];
  /** Those of them that were writes: a write's place counts only these, it goes ahead of the reads. */
  promisedWrites: number[];
  /** Asked to pump while a pass was running: it runs once more when that pass ends. */
  repump: boolean;
  /** When queued background calls were given a slot, within the last window (BACKGROUND_SHARE). */
  backgroundSends: number[];
  /** Those of them that were a baseline's pages (`bulk`): at most half the floor. */
  bulkSends: number[];
}

/** How many windows ahead callers refused at once are spread over. */
const MAX_PROMISED_WINDOWS = 10;

/** The first pause after a 429 without Retry-After (docs/architecture.md, "Rate budget"). */
const FIRST_BACKOFF_MS = 1_000;

/** setTimeout fires at once (after 1 ms) for longer delays: farther deadlines are reached in steps. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

export interface RateBudgetOptions {
  /** Sends per window for a licensee that brings no limit of its own (see `acquire`). */
  limit: number;
  windowMs: number;
  /** Share of the limit kept unused against clock and network skew. */
  margin: number;
  store?: BudgetStore;
  now?: () => number;
}

export class RateBudget {
  readonly effectiveLimit: number;
  private readonly store: BudgetStore;
  private readonly now: () => number;
  private readonly queues = new Map<string, Queue>();
  private closed = false;

  constructor(private readonly options: RateBudgetOptions) {
    this.effectiveLimit = this.withMargin(options.limit);
    this.store = options.store ?? new MemoryBudgetStore();
    this.now = options.now ?? Date.now;
    this.store.onSlotFreed?.((licensee) => {
      if (!this.closed && this.queues.has(licensee)) void this.pump(licensee);
    });
  }

  /**
   * Resolves with a slot when the call may be sent; rejects with RateLimitedError at its deadline.
   * Give the slot back to `finish` when the call is over. `limit` is the licensee's own budget per
   * window (LICENSEES_FILE's rateLimit); without one the options' limit applies. A call
   * queues behind every call of a higher priority, even those that arrive after it (BudgetPriority).
   */
  acquire(
    licensee: string,
    deadline: number,
    limit?: number,
    priority: BudgetPriority = 'interactive',
  ): Promise<string> {
    if (this.closed) return Promise.reject(closedError());
    const queue = this.queue(licensee);
    if (limit !== undefined) queue.effectiveLimit = this.withMargin(limit);
    return new Promise<string>((resolve, reject) => {
      const waiter: Waiter = { deadline, priority, resolve, reject };
      this.expireAtDeadline(licensee, waiter);
      const behind = queue.waiters.findIndex((w) => rankOf(w) > RANK[priority]);
      if (behind < 0) queue.waiters.push(waiter);
      else queue.waiters.splice(behind, 0, waiter);
      void this.pump(licensee);
    });
  }

  /**
   * A slot at once for a background call that may as well not be made (a read-ahead), or
   * RateLimitedError at once: only when nothing waits for the budget, the licensee is neither paused
   * nor probing, and the window stays within HEADROOM_SHARE counting it. It never queues, so it
   * never takes a slot a call that waits would have had, nor delays one that comes after it.
   */
  acquireIfFree(licensee: string, limit?: number): Promise<string> {
    if (this.closed) return Promise.reject(closedError());
    const queue = this.queue(licensee);
    if (limit !== undefined) queue.effectiveLimit = this.withMargin(limit);
    if (queue.waiters.length > 0 || queue.probing || queue.pausedUntil > this.now() || this.headroomLimit(queue) < 1)
      return Promise.reject(new RateLimitedError(1, 'no-headroom'));
    return new Promise<string>((resolve, reject) => {
      queue.waiters.push({ deadline: Infinity, priority: 'background', onlyIfFree: true, resolve, reject });
      void this.pump(licensee);
    });
  }

  /** Sends counted in the licensee's current window, in flight included (metrics, the feeds' pacing). */
  async used(licensee: string): Promise<number> {
    return (await this.store.freeTimes(licensee, this.now(), this.options.windowMs)).length;
  }

  /** Refuses every queued call and stops every timer: nothing is left to keep the process alive. */
  close(): void {
    this.closed = true;
    for (const queue of this.queues.values()) {
      clearTimeout(queue.wake);
      queue.wake = undefined;
      for (const waiter of queue.waiters.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.reject(closedError());
      }
    }
  }

  /** The call of this slot is over (answered or failed): its slot leaves the window one window later. */
  async finish(licensee: string, slot: string): Promise<void> {
    const queue = this.queue(licensee);
    if (queue.probeSlot === slot) queue.probeSlot = undefined;
    await this.store.finish(licensee, slot, this.now());
    void this.pump(licensee);
  }

  /** Nothing more is sent for this licensee until then. */
  pause(licensee: string, until: number): void {
    const queue = this.queue(licensee);
    queue.pausedUntil = Math.max(queue.pausedUntil, until);
  }

  /**
   * The call of `slot` was answered 429 anyway; returns the pause in ms. A Retry-After is honoured
   * up to one window (a stray `Retry-After: 86400` must not freeze a licensee for a day). Without
   * one, the licensee backs off and probes: one call at a time, after 1 s, then 2 s, 4 s … up to
   * the window for each probe answered 429, until one is answered otherwise. A 429 to a call sent
   * before probing began does not lengthen the backoff: a burst in flight is one signal, not many.
   */
  throttle(licensee: string, slot: string, retryAfterMs: number | undefined): number {
    const queue = this.queue(licensee);
    const windowMs = this.options.windowMs;
    let waitMs: number;
    if (retryAfterMs !== undefined) waitMs = Math.min(retryAfterMs, windowMs);
    else if (!queue.probing) {
      queue.probing = true;
      waitMs = queue.backoffMs = Math.min(FIRST_BACKOFF_MS, windowMs);
    } else if (slot === queue.probeSlot) waitMs = queue.backoffMs = Math.min(queue.backoffMs * 2, windowMs);
    else waitMs = queue.backoffMs;
    this.pause(licensee, this.now() + waitMs);
    return waitMs;
  }

  /** A call was answered without a 429: the licensee is back at full speed. */
  recovered(licensee: string): void {
    const queue = this.queues.get(licensee);
    if (!queue?.probing) return;
    queue.probing = false;
    queue.backoffMs = 0;
    void this.pump(licensee);
  }

  /** Sends this licensee may make per window, the margin taken off. */
  effectiveLimitOf(licensee: string): number {
    return this.queues.get(licensee)?.effectiveLimit ?? this.effectiveLimit;
  }

  /** Waiters still queued per licensee (for tests and metrics). */
  waiting(licensee: string): number {
    return this.queues.get(licensee)?.waiters.length ?? 0;
  }

  private queue(licensee: string): Queue {
    let q = this.queues.get(licensee);
    if (!q)
      this.queues.set(
        licensee,
        (q = {
          waiters: [],
          pausedUntil: 0,
          wakeAt: 0,
          pumping: false,
          probing: false,
          backoffMs: 0,
          effectiveLimit: this.effectiveLimit,
          promised: [],
          promisedWrites: [],
          repump: false,
          backgroundSends: [],
          bulkSends: [],
        }),
      );
    return q;
  }

  /** The background lane's floor: slots a window (BACKGROUND_SHARE). */
  private backgroundFloor(queue: Queue): number {
    return Math.floor(queue.effectiveLimit * BACKGROUND_SHARE);
  }

  /** The slots a read-ahead may count up to (see HEADROOM_SHARE). */
  private headroomLimit(queue: Queue): number {
    return Math.floor(queue.effectiveLimit * HEADROOM_SHARE);
  }

  /** The slots the waiter may count up to: a write all, any other read all but the writes' share (WRITE_SHARE). */
  private limitOf(queue: Queue, waiter: Waiter): number {
    if (waiter.onlyIfFree) return this.headroomLimit(queue);
    if (waiter.priority === 'write') return queue.effectiveLimit;
    return queue.effectiveLimit - Math.floor(queue.effectiveLimit * WRITE_SHARE);
  }

  /** At least one send a window, however small the limit and large the margin. */
  private withMargin(limit: number): number {
    return Math.max(1, Math.floor(limit * (1 - this.options.margin)));
  }

  private async pump(licensee: string): Promise<void> {
    const queue = this.queue(licensee);
    if (queue.pumping) {
      // A slot freed (or a waiter came) while this pass awaits the store: one more pass after it.
      queue.repump = true;
      return;
    }
    queue.pumping = true;
    queue.repump = false;
    try {
      while (queue.waiters.length > 0) {
        const now = this.now();
        if (queue.pausedUntil > now) {
          this.refuseUnlessFree(queue, queue.pausedUntil);
          await this.refuseHopeless(licensee, queue);
          return this.wakeAt(licensee, queue, queue.pausedUntil);
        }
        // Probing: one call at a time, never a read-ahead; the probe's `finish` pumps again.
        if (queue.probing) this.refuseUnlessFree(queue, now + queue.backoffMs);
        if (queue.probing && queue.probeSlot !== undefined) return;
        this.promote(queue, now);
        const head = queue.waiters[0];
        if (!head) break;
        const limit = this.limitOf(queue, head);
        const lane =
          head.priority === 'write' ? undefined : { background: inLane(head), floor: this.backgroundFloor(queue) };
        const slot =
          limit > 0
            ? await this.store.take(licensee, now, limit, this.options.windowMs, lane)
            : { taken: false as const, freeAt: Infinity };
        if (!slot.taken) {
          // Without headroom it is refused, not queued; a call queued ahead of it meanwhile is served next pass.
          if (head.onlyIfFree) {
            this.refuseUnlessFree(queue, slot.freeAt, head);
            continue;
          }
          this.refuseUnlessFree(queue, slot.freeAt);
          await this.refuseHopeless(licensee, queue);
          return this.wakeAt(licensee, queue, slot.freeAt);
        }
        const waiter = queue.waiters.shift();
        if (!waiter) {
          // Expired while the store answered: give the slot back at once.
          await this.store.finish(licensee, slot.slot, this.now() - this.options.windowMs);
          break;
        }
        clearTimeout(waiter.timer);
        if (queue.probing) queue.probeSlot = slot.slot;
        if (inLane(waiter)) queue.backgroundSends.push(now);
        if (inLane(waiter) && waiter.priority === 'bulk') queue.bulkSends.push(now);
        waiter.resolve(slot.slot);
      }
    } finally {
      queue.pumping = false;
      if (queue.repump && queue.waiters.length > 0) void this.pump(licensee);
    }
  }

  /**
   * Moves queued background calls to the front of the reads (in arrival order, behind those moved
   * before) while the background lane has had fewer than its floor of the window's slots, counting
   * those moved. A moved call is served next after the writes, and a read that comes later queues
   * behind it.
   */
  private promote(queue: Queue, now: number): void {
    queue.backgroundSends = queue.backgroundSends.filter((at) => at > now - this.options.windowMs);
    queue.bulkSends = queue.bulkSends.filter((at) => at > now - this.options.windowMs);
    // Writes, then the calls moved before, are at the front.
    let ahead = queue.waiters.findIndex((w) => rankOf(w) >= 0);
    if (ahead < 0) return;
    const moved = queue.waiters.slice(0, ahead).filter((w) => w.promoted);
    let room = this.backgroundFloor(queue) - queue.backgroundSends.length - moved.length;
    // Polls first, then a baseline's pages, which take at most half the floor: the polls of the
    // feeds already running keep the other half whatever a baseline of many pages asks (CallPriority).
    let bulkRoom =
      Math.floor(this.backgroundFloor(queue) / 2) -
      queue.bulkSends.length -
      moved.filter((w) => w.priority === 'bulk').length;
    for (const priority of ['background', 'bulk'] as const)
      for (let at = ahead; room > 0 && at < queue.waiters.length; at++) {
        const waiter = queue.waiters[at]!;
        if (waiter.priority !== priority || waiter.onlyIfFree || waiter.promoted) continue;
        if (priority === 'bulk' && bulkRoom-- <= 0) break;
        waiter.promoted = true;
        queue.waiters.splice(at, 1);
        queue.waiters.splice(ahead++, 0, waiter);
        room--;
      }
  }

  /**
   * Refuses the waiters that take a slot only if one is free now (all of them, or only `which`):
   * the pump cannot serve them at once. They are last in the queue, so no other waiter's place moves.
   */
  private refuseUnlessFree(queue: Queue, freeAt: number, which?: Waiter): void {
    const now = this.now();
    const at = freeAt === Infinity ? now + this.options.windowMs : freeAt;
    for (const waiter of queue.waiters.filter((w) => w.onlyIfFree && (which === undefined || w === which))) {
      queue.waiters.splice(queue.waiters.indexOf(waiter), 1);
      waiter.reject(new RateLimitedError(secondsUntil(at, now), 'no-headroom'));
    }
  }

  /** Arms the waiter's deadline; an unbounded one needs no timer, a far one is reached in steps. */
  private expireAtDeadline(licensee: string, waiter: Waiter): void {
    if (waiter.deadline === Infinity) return;
    const waitMs = Math.max(0, waiter.deadline - this.now());
    waiter.timer =
      waitMs > LONGEST_TIMER_MS
        ? setTimeout(() => this.expireAtDeadline(licensee, waiter), LONGEST_TIMER_MS)
        : setTimeout(() => void this.expire(licensee, waiter), waitMs);
  }

  private wakeAt(licensee: string, queue: Queue, at: number): void {
    // Infinity: every slot is a call in flight; `finish` pumps again.
    if (at === Infinity || (queue.wake && queue.wakeAt <= at)) return;
    clearTimeout(queue.wake);
    queue.wakeAt = at;
    // +1 ms: a send at exactly `at - windowMs` leaves the window only after `at`.
    queue.wake = setTimeout(
      () => {
        queue.wake = undefined;
        void this.pump(licensee);
      },
      Math.min(LONGEST_TIMER_MS, Math.max(0, at - this.now() + 1)),
    );
  }

  /**
   * Called by the pump when it cannot start the head of the queue now: the waiters whose slot
   * cannot come before their deadline are refused at once, head of the queue first, each with the
   * time its slot would come. A client learns at once to come back then, instead of holding a
   * connection for the whole deadline to hear the same answer. The pump alone serves waiters, so
   * none is refused while being served.
   */
  private async refuseHopeless(licensee: string, queue: Queue): Promise<void> {
    const now = this.now();
    const frees = await this.store.freeTimes(licensee, now, this.options.windowMs);
    queue.promised = queue.promised.filter((at) => at > now);
    queue.promisedWrites = queue.promisedWrites.filter((at) => at > now);
    let position = 0;
    // The background lane's sends, past and projected, in order: when each frees a place in the floor.
    const laneSends = [...queue.backgroundSends];
    const floor = this.backgroundFloor(queue);
    for (const waiter of [...queue.waiters]) {
      const write = waiter.priority === 'write';
      const limit = this.limitOf(queue, waiter);
      // A write goes ahead of the readers told to come back, and a moved background call ahead of
      // every caller told to come back but the writers.
      const promised = write || waiter.promoted ? queue.promisedWrites.length : queue.promised.length;
      let startAt = this.projectedStart(queue, frees, position + promised, now, limit);
      // A poll not moved yet is moved once a send of the lane leaves the window: it waits for that
      // if it comes before its deadline, instead of being refused behind every first page. In turn,
      // so the feeds polled together share the floor rather than the luckiest taking it every time.
      const poll = waiter.priority === 'background' && !waiter.onlyIfFree;
      if (poll && !waiter.promoted && floor > 0) {
        const freeing = laneSends.length - floor;
        const movedAt = freeing < 0 ? now : laneSends[freeing]! + this.options.windowMs;
        // Once moved it goes first, behind the lane's calls still waiting ahead of it.
        const laneAhead = laneSends.length - queue.backgroundSends.length;
        startAt = Math.min(startAt, Math.max(movedAt, this.projectedStart(queue, frees, laneAhead, now, limit)));
      }
      if (startAt <= waiter.deadline) {
        if (poll || waiter.promoted) laneSends.push(startAt);
        position++;
        continue;
      }
      queue.waiters.splice(queue.waiters.indexOf(waiter), 1);
      clearTimeout(waiter.timer);
      // Spread over at most MAX_PROMISED_WINDOWS windows: a flood of refusals must not grow the
      // list (and each pass's work) without bound; callers past it hear the farthest time.
      if (queue.promised.length < MAX_PROMISED_WINDOWS * queue.effectiveLimit) {
        queue.promised.push(startAt);
        if (write) queue.promisedWrites.push(startAt);
      }
      waiter.reject(new RateLimitedError(secondsUntil(startAt, now), 'hopeless'));
    }
  }

  /**
   * When the waiter at `position` could have its slot, counting up to `limit` (limitOf): the callers
   * ahead of it take the free slots now, then each slot again as it leaves the window, in the order
   * they leave, a window's worth per window. A call in flight (or started now) frees its slot a
   * window after it finishes, so no sooner than a window from now: the estimate is the earliest the
   * slot can come.
   */
  private projectedStart(queue: Queue, freeTimes: number[], position: number, now: number, limit: number): number {
    const windowMs = this.options.windowMs;
    const free = limit - freeTimes.length;
    if (position < free) return Math.max(now, queue.pausedUntil);
    const cycle = [
      ...freeTimes.map((t) => (t === Infinity ? now + windowMs : t)),
      ...Array<number>(Math.max(0, free)).fill(now + windowMs),
    ].sort((a, b) => a - b);
    const index = position - free;
    return Math.max(cycle[index % cycle.length]! + windowMs * Math.floor(index / cycle.length), queue.pausedUntil);
  }

  /**
   * Refuses every queued call whose deadline has passed, in queue order (timers of equal deadlines
   * may fire in any order). Each learns when a slot could be its own, so refused callers spread
   * their retries instead of returning together.
   */
  private async expire(licensee: string, waiter: Waiter): Promise<void> {
    const queue = this.queue(licensee);
    if (!queue.waiters.includes(waiter)) return;
    const now = Math.max(this.now(), waiter.deadline);
    const due = queue.waiters.map((w, position) => ({ w, position })).filter(({ w }) => w.deadline <= now);
    queue.waiters = queue.waiters.filter((w) => w.deadline > now);
    const frees = await this.store.freeTimes(licensee, now, this.options.windowMs);
    for (const { w, position } of due) {
      clearTimeout(w.timer);
      const startAt = this.projectedStart(queue, frees, position, now, this.limitOf(queue, w));
      w.reject(new RateLimitedError(secondsUntil(startAt, now), 'deadline'));
    }
  }
}

/** Whether the waiter is in the background lane (its floor): a poll, a replay or a baseline's page, never a read-ahead. */
function inLane(waiter: Waiter): boolean {
  return (waiter.priority === 'background' || waiter.priority === 'bulk') && !waiter.onlyIfFree;
}

/** A waiter's place in the queue's order: a moved background call goes behind the writes, ahead of every other read. */
function rankOf(waiter: Waiter): number {
  return waiter.promoted ? -1 : RANK[waiter.priority];
}

function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}

function closedError(): Error {
  return new UpstreamUnavailableError('the gateway is shutting down');
}

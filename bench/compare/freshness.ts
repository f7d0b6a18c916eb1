/**
 * S10's freshness check (issue 37: "every answer no older than the feed's last poll unless marked
 * stale"), kept apart from the I/O so that it can be tested. Every booking made at the emulator is
 * recorded here. A change is due a poll interval after the booking was answered (a feed polls at
 * least that often when it can), or when the event's `reservationChanged` subscriber was told it
 * (the feed's poll read it) if that came sooner; from then on, plus a margin, every answer holding
 * that reservation must show its new state, and every unfiltered page of its event must count a new
 * reservation, unless the answer is marked `extensions.stale`. An answer that does not is older than
 * the feed's last poll.
 */

/** A booking at the emulator: a new reservation or a change of one (its status here). */
export interface TrackedChange {
  eventId: number;
  reservationNumber: number;
  kind: 'created' | 'changed';
  /** The reservation's status after the booking, as the graph spells it (NEW, ACCEPTED, …). */
  status: string;
  /** ms since epoch: the booking was sent, and answered. */
  sentAt: number;
  answeredAt: number;
  /** When the event's subscriber was told of it (the feed's poll read it); null: not told (yet). */
  toldAt: number | null;
}

/** What one reservation-page answer with data showed, as far as the check needs it. */
export interface PageRead {
  eventId: number;
  /** A page of the whole list (no filter): its totalCount counts every reservation of the event. */
  unfiltered: boolean;
  /** ms since epoch: the query was sent, and its answer read. */
  startedAt: number;
  endedAt: number;
  totalCount: number | null;
  nodes: readonly { reservationNumber: number; status: string }[];
  /** The answer carries `extensions.stale` (data of a held copy, said so). */
  staleMarked: boolean;
}

export interface Judgement {
  /** `unchecked`: nothing in the answer had a change due (plus the margin) before it was sent. */
  verdict: 'unchecked' | 'current' | 'older';
  /** For `older`: how long after the first state it should have shown was due (ms), and what was wrong. */
  lateMs?: number;
  what?: string;
  /**
   * For `older`: it certainly lacks a change the event's subscriber had been told (plus the margin)
   * before it was sent, i.e. read by a poll of the feed; false: it is late by the poll interval only.
   */
  afterTell?: boolean;
}

/** A subscriber's message: a reservation in the state the feed read. */
interface Tell {
  reservationNumber: number;
  status: string;
  at: number;
}

export class FreshnessLedger {
  private readonly byNumber = new Map<number, TrackedChange[]>();
  private readonly createdByEvent = new Map<number, TrackedChange[]>();
  /** Tells that came before the booking's answer was read (its number unknown until then). */
  private readonly pending: Tell[] = [];

  /**
   * `baseCounts`: each event's totalCount before the first booking. `pollMs`: the feeds' poll
   * interval. `marginMs`: how long after it was due an answer may still lack a change (the feed
   * revising its kept pages, the harness's own event loop).
   */
  constructor(
    private readonly baseCounts: ReadonlyMap<number, number>,
    readonly pollMs: number,
    readonly marginMs: number,
  ) {}

  get changes(): TrackedChange[] {
    return [...this.byNumber.values()].flat().sort((a, b) => a.sentAt - b.sentAt);
  }

  /** A booking the emulator answered. */
  record(change: Omit<TrackedChange, 'toldAt'>): TrackedChange {
    const tracked: TrackedChange = { ...change, toldAt: null };
    const list = this.byNumber.get(change.reservationNumber) ?? [];
    list.push(tracked);
    list.sort((a, b) => a.sentAt - b.sentAt);
    this.byNumber.set(change.reservationNumber, list);
    if (change.kind === 'created') {
      const created = this.createdByEvent.get(change.eventId) ?? [];
      created.push(tracked);
      this.createdByEvent.set(change.eventId, created);
    }
    // A tell of this number that came while the booking's answer was on its way.
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const tell = this.pending[i]!;
      if (tell.reservationNumber === change.reservationNumber && this.apply(tell)) this.pending.splice(i, 1);
    }
    return tracked;
  }

  /**
   * The subscriber of the reservation's event was told it is in `status` at `at`: the latest
   * booking of it sent by then in that state, and every earlier one, were read by the feed's poll
   * (two changes between two polls arrive as one, in the latest state).
   */
  told(reservationNumber: number, status: string, at: number): void {
    const tell = { reservationNumber, status, at };
    if (!this.apply(tell)) this.pending.push(tell);
  }

  private apply(tell: Tell): boolean {
    const list = this.byNumber.get(tell.reservationNumber);
    if (!list) return false;
    let latest = -1;
    for (let i = 0; i < list.length; i++) if (list[i]!.sentAt <= tell.at && list[i]!.status === tell.status) latest = i;
    if (latest === -1) return false;
    for (let i = 0; i <= latest; i++) if (list[i]!.toldAt === null) list[i]!.toldAt = tell.at;
    return true;
  }

  private toldBy(change: TrackedChange, at: number): boolean {
    return change.toldAt !== null && change.toldAt + this.marginMs <= at;
  }

  /** When an answer must show the change: told, or a poll interval after it was made, whichever first; plus the margin. */
  private due(change: TrackedChange): number {
    return Math.min(change.toldAt ?? Number.POSITIVE_INFINITY, change.answeredAt + this.pollMs) + this.marginMs;
  }

  /**
   * Holds one answer against the bookings: each reservation it shows must be in the state of its
   * last booking due before the query was sent (or of a later one sent before its answer came);
   * an unfiltered page's totalCount must count every new reservation of its event due by then.
   */
  judge(read: PageRead): Judgement {
    let checked = false;
    let lateMs = Number.NEGATIVE_INFINITY;
    let afterTell = false;
    const wrong: string[] = [];
    for (const node of read.nodes) {
      const list = this.byNumber.get(node.reservationNumber);
      if (!list) continue;
      let last = -1;
      for (let i = 0; i < list.length; i++) if (this.due(list[i]!) <= read.startedAt) last = i;
      if (last === -1) continue;
      checked = true;
      const allowed = new Set([list[last]!.status]);
      for (let i = last + 1; i < list.length; i++) if (list[i]!.sentAt <= read.endedAt) allowed.add(list[i]!.status);
      if (allowed.has(node.status)) continue;
      lateMs = Math.max(lateMs, read.startedAt - this.due(list[last]!));
      if (this.toldBy(list[last]!, read.startedAt)) afterTell = true;
      wrong.push(`reservation ${node.reservationNumber} ${node.status}, not ${[...allowed].join(' or ')}`);
    }
    const base = this.baseCounts.get(read.eventId);
    if (read.unfiltered && read.totalCount !== null && base !== undefined) {
      const due = (this.createdByEvent.get(read.eventId) ?? []).filter((c) => this.due(c) <= read.startedAt);
      const dues = due.map((c) => this.due(c)).sort((a, b) => b - a);
      if (dues.length > 0) {
        checked = true;
        const missing = base + dues.length - read.totalCount;
        if (missing > 0) {
          // The answer lacks at least `missing` of them: at the least, the newest ones.
          lateMs = Math.max(lateMs, read.startedAt - dues[missing - 1]!);
          // Certainly one that was told, when fewer than `missing` were not.
          if (due.filter((c) => !this.toldBy(c, read.startedAt)).length < missing) afterTell = true;
          wrong.push(`totalCount ${read.totalCount}, not at least ${base + dues.length}`);
        }
      }
    }
    if (wrong.length) return { verdict: 'older', lateMs, what: wrong.join('; '), afterTell };
    return { verdict: checked ? 'current' : 'unchecked' };
  }
}

/** The counts S10 keeps of the judgements: answers marked stale apart (they may be older). */
export interface FreshnessCounts {
  /** Answers with data that held a change due before they were sent. */
  checked: number;
  /** Of those, older than the feed's poll and not marked stale: what the goal wants at 0. */
  olderUnmarked: number;
  /** Of those, lacking a change the feed had told (afterTell), not only late by the poll interval. */
  olderUnmarkedAfterTell: number;
  /** Older, and marked stale: allowed. */
  olderMarked: number;
  /** The most an unmarked older answer was late (ms past the change's due time, margin included). */
  maxLateMs: number;
  /** Up to ten unmarked older answers, described. */
  examples: string[];
}

export const noFreshness = (): FreshnessCounts => ({
  checked: 0,
  olderUnmarked: 0,
  olderUnmarkedAfterTell: 0,
  olderMarked: 0,
  maxLateMs: 0,
  examples: [],
});

/** Counts one answer's judgement; `where` describes the query for an example. */
export function countJudgement(counts: FreshnessCounts, read: PageRead, judgement: Judgement, where: string): void {
  if (judgement.verdict === 'unchecked') return;
  counts.checked++;
  if (judgement.verdict !== 'older') return;
  if (read.staleMarked) {
    counts.olderMarked++;
    return;
  }
  counts.olderUnmarked++;
  if (judgement.afterTell) counts.olderUnmarkedAfterTell++;
  counts.maxLateMs = Math.max(counts.maxLateMs, judgement.lateMs ?? 0);
  if (counts.examples.length < 10)
    counts.examples.push(
      `${new Date(read.startedAt).toISOString()} ${where}: ${judgement.what} (${((judgement.lateMs ?? 0) / 1000).toFixed(1)} s past due${judgement.afterTell ? ', after the feed told it' : ''})`,
    );
}

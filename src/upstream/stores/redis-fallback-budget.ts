import type { RedisConnection } from '../../redis/connection.ts';
import type { BackgroundLane, BudgetStore } from '../budget.ts';
import type { OwnSend, RedisBudgetStore } from './redis-budget.ts';

type Logger = { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };

/** Commands timed out in a row, the connection up, before the budget goes local. */
const SLOW_ANSWERS_TO_SWITCH = 3;

export interface FallbackBudgetOptions {
  /** The share of each licensee's limit this replica may send alone while Redis is away (REDIS_FALLBACK_SHARE). */
  share: number;
  windowMs: number;
  /** How often, while on the local budget, Redis is asked whether it is back. */
  probeEveryMs?: number;
  logger?: Logger;
  now?: () => number;
}

/**
 * The shared budget, kept serving when Redis is lost: each replica then budgets alone with its
 * share of the limit, so the replicas together still stay under it. Every send of this replica in
 * the last window is also kept here (a journal): it is the local budget while Redis is away, and
 * when Redis is back it is written there before the budget is shared again, so that a Redis that
 * restarted empty starts its window true. Each switch is logged once.
 */
export class FallbackBudgetStore implements BudgetStore {
  private local = false;
  private readonly journal = new Map<string, Map<string, OwnSend>>();
  private next = 0;
  private probe?: NodeJS.Timeout;
  private returning = false;
  /** The limit each licensee's budget last asked for (the local share is taken of it). */
  private readonly limits = new Map<string, number>();
  /** Commands failed in a row while the connection stayed up (timeouts of a busy Redis). */
  private slowInARow = 0;
  private closed = false;
  private readonly now: () => number;

  constructor(
    private readonly shared: RedisBudgetStore,
    private readonly connection: RedisConnection,
    private readonly options: FallbackBudgetOptions,
  ) {
    this.now = options.now ?? Date.now;
    connection.onReconnect(() => void this.tryReturn());
  }

  /** Whether the budget is shared through Redis now (false: this replica's local share). */
  isShared(): boolean {
    return !this.local;
  }

  onSlotFreed(listener: (licensee: string) => void): void {
    this.shared.onSlotFreed(listener);
  }

  async take(licensee: string, now: number, limit: number, windowMs: number, lane?: BackgroundLane) {
    this.limits.set(licensee, limit);
    const sends = this.sendsOf(licensee, now);
    if (!this.local) {
      try {
        const answer = await this.shared.take(licensee, now, limit, windowMs, lane);
        this.slowInARow = 0;
        if (answer.taken) sends.set(answer.slot, { slot: answer.slot, takenAt: now });
        return answer;
      } catch (error) {
        this.failed(error);
      }
    }
    const localLimit = this.localLimit(limit);
    if (sends.size < localLimit) {
      const slot = `${this.connection.replicaId}:local:${++this.next}`;
      sends.set(slot, { slot, takenAt: now });
      return { taken: true as const, slot };
    }
    return { taken: false as const, freeAt: freeTimesOf(sends, windowMs)[sends.size - localLimit]! };
  }

  async finish(licensee: string, slot: string, at: number) {
    const send = this.journal.get(licensee)?.get(slot);
    if (send) send.finishedAt = at;
    if (this.local) return;
    // A finish lost with Redis is written back with the journal when Redis returns.
    await this.shared.finish(licensee, slot, at).catch((error: unknown) => this.failed(error));
  }

  async freeTimes(licensee: string, now: number, windowMs: number) {
    if (!this.local) {
      try {
        return await this.shared.freeTimes(licensee, now);
      } catch (error) {
        this.failed(error);
      }
    }
    // The part of the limit that is other replicas' share counts as taken, so the budget's
    // projection refuses at once a waiter whose slot cannot come in time, as with Redis.
    const limit = this.limits.get(licensee) ?? 0;
    const othersShare = Array<number>(Math.max(0, limit - this.localLimit(limit))).fill(Infinity);
    return [...freeTimesOf(this.sendsOf(licensee, now), windowMs), ...othersShare];
  }

  private localLimit(limit: number): number {
    return Math.max(1, Math.floor(limit * this.options.share));
  }

  /** Stops probing for Redis. */
  close(): void {
    this.closed = true;
    clearTimeout(this.probe);
  }

  /** This replica's sends of the last window (calls in flight included), pruned. */
  private sendsOf(licensee: string, now: number): Map<string, OwnSend> {
    let sends = this.journal.get(licensee);
    if (!sends) this.journal.set(licensee, (sends = new Map()));
    for (const [slot, send] of sends) {
      if (send.finishedAt !== undefined && send.finishedAt + this.options.windowMs <= now) sends.delete(slot);
    }
    return sends;
  }

  /**
   * A command failed: that call is answered locally. The budget switches to local only when the
   * connection is lost, or when Redis stays too slow to answer (a hung server): one slow answer
   * on a busy machine must not flap the whole budget back and forth.
   */
  private failed(error: unknown): void {
    if (this.connection.connected() && ++this.slowInARow < SLOW_ANSWERS_TO_SWITCH) return;
    this.goLocal(error);
  }

  private goLocal(error: unknown): void {
    this.slowInARow = 0;
    if (!this.local) {
      this.local = true;
      this.options.logger?.warn(
        { share: this.options.share, error: (error as Error).message },
        'Redis unreachable: the rate budget falls back to this replica’s share of each limit ' +
          '(REDIS_FALLBACK_SHARE) while it is away',
      );
    }
    this.probeLater();
  }

  private probeLater(): void {
    if (this.closed || this.probe) return;
    this.probe = setTimeout(
      () => {
        this.probe = undefined;
        void this.tryReturn();
      },
      this.options.probeEveryMs ?? Math.min(1_000, this.options.windowMs / 4),
    );
    this.probe.unref();
  }

  /** Writes this replica's sends of the last window into Redis, then shares the budget again. */
  private async tryReturn(): Promise<void> {
    if (!this.local || this.returning || this.closed) return;
    this.returning = true;
    try {
      const now = this.now();
      for (const licensee of this.journal.keys())
        await this.shared.record(licensee, now, [...this.sendsOf(licensee, now).values()]);
      this.local = false;
      this.options.logger?.info({}, 'Redis reachable again: the rate budget is shared through Redis again');
    } catch {
      this.probeLater();
    } finally {
      this.returning = false;
    }
  }
}

function freeTimesOf(sends: Map<string, OwnSend>, windowMs: number): number[] {
  return [...sends.values()]
    .map((send) => (send.finishedAt === undefined ? Infinity : send.finishedAt + windowMs))
    .sort((a, b) => a - b);
}

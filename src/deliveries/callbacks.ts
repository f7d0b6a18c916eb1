import { createHash } from 'node:crypto';
import type { ExecutionResult } from 'graphql';
import {
  type CallbackMessage,
  type CallbackTarget,
  checkMessage,
  completeMessage,
  nextMessage,
  PROTOCOL_HEADER,
} from './callback-protocol.ts';
import type { CallbackRecord, CallbackStore } from './callback-store.ts';
import type { OutboundClient } from './outbound.ts';
import type { ChangeCursor } from './resume.ts';

/**
 * The running callback subscriptions of this replica: each result of a subscription's stream is
 * POSTed to its router as `next`, a `check` goes out at the heartbeat the router asked for, and the
 * end is a `complete` (with the errors of a stream that failed, such as an expired credential).
 * A router that answers 404 has forgotten the subscription, one that cannot be reached after a few
 * tries is gone: either way the stream is stopped (which leaves its change feed) and nothing more is sent.
 */

/** How a delivery went: answered, forgotten by the router (404), or no usable answer after the retries. */
type Outcome = 'ok' | 'gone' | 'failed';

/** Tries of a callback before the router is deemed gone, and the pause before each retry. */
const RETRY_PAUSES_MS = [250, 1_000];

/**
 * A subscription's cursor is written to its record at most this often: a burst of changes costs
 * one write, and a replica that dies leaves a cursor at most this old (the adopter replays from it).
 */
const CURSOR_WRITE_MS = 1_000;

export interface CallbackLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** The key a subscription is recorded under: its router's id and address (two routers may pick the same id). */
export const keyOf = (target: CallbackTarget) =>
  createHash('sha256').update(`${target.callbackUrl}\u0000${target.subscriptionId}`).digest('base64url');

export class CallbackDeliveries {
  private readonly running = new Map<string, RunningCallback>();
  private closed = false;

  constructor(
    private readonly outbound: OutboundClient,
    private readonly store: CallbackStore,
    private readonly logger?: CallbackLogger,
  ) {}

  /** Whether the allow-list lets a callback go to `address`. */
  allows(address: string): boolean {
    return this.outbound.allows(address);
  }

  /** Live callback subscriptions on this replica. */
  active(): number {
    return this.running.size;
  }

  /**
   * With Redis: runs again, through `reopen` (the gateway's own execution of the recorded request),
   * each recorded subscription no replica holds any more.
   */
  adoptOrphans(reopen: (record: CallbackRecord) => Promise<ExecutionResult>): void {
    this.store.watch(async (record) => {
      if (this.closed) return;
      this.logger?.info({ subscription: record.target.subscriptionId }, 'callback subscription adopted');
      const answer = await reopen(record).catch(() => ({
        errors: [{ message: 'The subscription could not be reopened.' }],
      }));
      // Refused this time (an expired credential, a rule): the router hears why, and it is forgotten.
      if (answer.errors?.length && !this.running.has(record.key)) {
        await this.send(record.target, completeMessage(record.target, answer.errors), 1);
        await this.store.drop(record.key);
      }
    });
  }

  /** The router's answer to a `check` of `target` (the status; 0 when it could not be reached). */
  async check(target: CallbackTarget): Promise<number> {
    try {
      return (await this.outbound.postJson(target.callbackUrl, checkMessage(target), PROTOCOL_HEADER)).status;
    } catch {
      return 0;
    }
  }

  /**
   * Delivers `results` to the router of `record` until one of them ends it; `cursor` follows the
   * stream (told by its resolvers), and the record keeps where the router's deliveries stand.
   */
  async start(record: CallbackRecord, results: AsyncIterable<ExecutionResult>, cursor?: ChangeCursor): Promise<void> {
    const iterator = results[Symbol.asyncIterator]();
    if (this.closed) {
      void iterator.return?.();
      return;
    }
    // A router that asks again for a subscription it already has: the new one replaces it.
    this.running.get(record.key)?.stop('replaced');
    // The stream's start (its `since`, or now): an adopter that finds no later cursor resumes from there.
    const position = cursor?.position;
    if (position !== undefined) record = { ...record, cursor: position };
    const running = new RunningCallback(record, iterator, cursor, {
      send: (message, tries) => this.send(record.target, message, tries),
      advance: (at) => this.store.advance({ ...record, cursor: at }).catch(() => undefined),
      ended: (how) => {
        if (this.running.get(record.key) !== running) return;
        this.running.delete(record.key);
        if (how === 'ended') void this.store.drop(record.key);
        else if (how === 'let go') void this.store.letGo(record.key);
      },
      logger: this.logger,
    });
    this.running.set(record.key, running);
    const held = await this.store.hold(record, () => running.stop('lost'));
    if (!held) return running.stop('lost');
    running.run();
  }

  /** POSTs one message, trying again on failures that may pass; a 404 is final. */
  private async send(target: CallbackTarget, message: CallbackMessage, tries: number): Promise<Outcome> {
    for (let attempt = 0; attempt < tries; attempt++) {
      if (attempt > 0) await pause(RETRY_PAUSES_MS[attempt - 1] ?? 1_000);
      try {
        const { status } = await this.outbound.postJson(target.callbackUrl, message, PROTOCOL_HEADER);
        if (status >= 200 && status < 300) return 'ok';
        if (status === 404) return 'gone';
      } catch {
        // No answer: tried again below.
      }
    }
    return 'failed';
  }

  /**
   * Stops every subscription of this replica. With Redis they stay recorded (another replica adopts
   * them); without, the router is told they are complete (nothing will run them any more).
   */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.running.values()];
    await Promise.all(all.map((running) => running.stop(this.store.shared ? 'let go' : 'closing')));
    await this.store.close();
    await this.outbound.close();
  }
}

type Ending = 'ended' | 'let go' | 'lost' | 'replaced';

class RunningCallback {
  private heartbeat?: NodeJS.Timeout;
  private over = false;
  /** Messages go out one at a time, in order. */
  private queue: Promise<unknown> = Promise.resolve();
  /** The cursor as recorded, the one delivered since and not yet recorded, and when it was last written. */
  private recorded: string | undefined;
  private delivered?: string;
  private writing?: NodeJS.Timeout;
  private lastWrite = 0;

  constructor(
    private readonly record: CallbackRecord,
    private readonly iterator: AsyncIterator<ExecutionResult>,
    private readonly cursor: ChangeCursor | undefined,
    private readonly deps: {
      send(message: CallbackMessage, tries: number): Promise<Outcome>;
      advance(cursor: string): Promise<unknown>;
      ended(how: Ending): void;
      logger?: CallbackLogger | undefined;
    },
  ) {
    this.recorded = record.cursor;
  }

  run(): void {
    this.beat();
    void this.pump();
  }

  /**
   * A check every heartbeat interval, a tenth early: a router that times each interval from the
   * message before (Hive Gateway does) never waits a whole one.
   */
  private beat() {
    const interval = this.record.target.heartbeatIntervalMs;
    if (interval === 0 || this.over) return;
    this.heartbeat = setTimeout(() => {
      void this.deliver(checkMessage(this.record.target)).then(() => this.beat());
    }, interval * 0.9);
    this.heartbeat.unref();
  }

  private async pump() {
    try {
      for (;;) {
        const next = await this.iterator.next();
        if (this.over) return;
        if (next.done) return await this.complete();
        const result = next.value;
        // A stream's failure (an unknown event, a feed that failed, an expired credential) is its last result.
        if (result.errors?.length && result.data == null) return await this.complete(result.errors);
        // Read now: the next result moves it.
        const position = this.cursor?.position;
        if ((await this.deliver(nextMessage(this.record.target, result))) && position !== undefined)
          this.advance(position);
      }
    } catch (error) {
      if (!this.over) await this.complete([{ message: 'The subscription failed.' }]);
      this.deps.logger?.warn({ err: error }, 'callback subscription stream failed');
    }
  }

  private async complete(errors?: readonly unknown[]) {
    if (this.over) return;
    await this.deliver(completeMessage(this.record.target, errors), 'complete');
    this.stop('ended');
  }

  /**
   * The router accepted everything up to `position`: recorded at once when the last write is a
   * second old, else once it is (the latest position then), so a burst costs one write.
   */
  private advance(position: string) {
    this.delivered = position === this.recorded ? undefined : position;
    if (this.delivered === undefined || this.writing) return;
    this.writing = setTimeout(
      () => {
        this.writing = undefined;
        void this.writeCursor();
      },
      Math.max(0, this.lastWrite + CURSOR_WRITE_MS - Date.now()),
    );
    this.writing.unref();
  }

  private async writeCursor() {
    const position = this.delivered;
    if (position === undefined || this.over) return;
    this.delivered = undefined;
    this.recorded = position;
    this.lastWrite = Date.now();
    await this.deps.advance(position);
  }

  /** Sends in order (true when the router accepted it); a router gone (404, or unreachable after the retries) stops the subscription. */
  private deliver(message: CallbackMessage, last?: 'complete'): Promise<boolean> {
    const sent = this.queue.then(async () => {
      if (this.over && !last) return false;
      const outcome = await this.deps.send(message, RETRY_PAUSES_MS.length + 1);
      if (outcome === 'ok') return true;
      if (last) return false;
      this.deps.logger?.info(
        { subscription: this.record.target.subscriptionId, outcome },
        outcome === 'gone' ? 'the router forgot the callback subscription' : 'the router could not be reached',
      );
      this.stop('ended');
      return false;
    });
    this.queue = sent;
    return sent;
  }

  /** Stops the stream (leaving its feed) and the heartbeats; 'closing' tells the router it is complete first. */
  async stop(how: Ending | 'closing'): Promise<void> {
    if (this.over) return;
    if (how === 'closing') {
      clearTimeout(this.heartbeat);
      await this.deliver(completeMessage(this.record.target), 'complete');
    }
    clearTimeout(this.writing);
    // Let go for another replica (this one stops): it resumes from what the router has, not from a
    // second ago. A message already on its way is given up to 2 s to be answered first, so that the
    // adopter does not send it again.
    if (how === 'let go') {
      await Promise.race([this.queue.catch(() => undefined), pause(LET_GO_WAIT_MS)]);
      await this.writeCursor();
    }
    this.over = true;
    clearTimeout(this.heartbeat);
    this.deps.ended(how === 'closing' ? 'ended' : how);
    await this.iterator.return?.()?.catch(() => undefined);
  }
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
/** How long letting go waits for a message already on its way to be answered. */
const LET_GO_WAIT_MS = 2_000;

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

  /** Delivers `results` to the router of `record` until one of them ends it. */
  async start(record: CallbackRecord, results: AsyncIterable<ExecutionResult>): Promise<void> {
    const iterator = results[Symbol.asyncIterator]();
    if (this.closed) {
      void iterator.return?.();
      return;
    }
    // A router that asks again for a subscription it already has: the new one replaces it.
    this.running.get(record.key)?.stop('replaced');
    const running = new RunningCallback(record, iterator, {
      send: (message, tries) => this.send(record.target, message, tries),
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

  constructor(
    private readonly record: CallbackRecord,
    private readonly iterator: AsyncIterator<ExecutionResult>,
    private readonly deps: {
      send(message: CallbackMessage, tries: number): Promise<Outcome>;
      ended(how: Ending): void;
      logger?: CallbackLogger | undefined;
    },
  ) {}

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
        await this.deliver(nextMessage(this.record.target, result));
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

  /** Sends in order; a router gone (404, or unreachable after the retries) stops the subscription. */
  private deliver(message: CallbackMessage, last?: 'complete'): Promise<unknown> {
    const sent = this.queue.then(async () => {
      if (this.over && !last) return;
      const outcome = await this.deps.send(message, RETRY_PAUSES_MS.length + 1);
      if (outcome === 'ok' || last) return;
      this.deps.logger?.info(
        { subscription: this.record.target.subscriptionId, outcome },
        outcome === 'gone' ? 'the router forgot the callback subscription' : 'the router could not be reached',
      );
      this.stop('ended');
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
    this.over = true;
    clearTimeout(this.heartbeat);
    this.deps.ended(how === 'closing' ? 'ended' : how);
    await this.iterator.return?.()?.catch(() => undefined);
  }
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

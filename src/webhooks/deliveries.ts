import type { ReservationChange } from '../changes/change.ts';
import { AddressRefusedError } from '../deliveries/address-policy.ts';
import type { OutboundAnswer } from '../deliveries/outbound.ts';
import { OutageLog } from '../redis/outage-log.ts';
import type { Delivery, DeliveryAttempt, DeliveryStore } from './delivery-store.ts';
import type { EndpointStore, WebhookEndpoint } from './endpoint-store.ts';
import { messageId, reservationMessage, TYPE_OF_KIND, testMessage } from './message.ts';
import type { AttemptOutcome } from './metrics.ts';
import { honoursRetryAfter, pauseBefore, RETRY_SCHEDULE_MS, retryAfterMs, verdictOf } from './retry.ts';
import { signedHeaders } from './signature.ts';

/**
 * The webhook deliveries: changes become deliveries (one per enabled endpoint of the change's
 * event and kind), and a dispatcher tries the due ones, a few at a time, each signed afresh with
 * its endpoint's secrets and sent through the one outbound path. An answer decides what follows
 * (retry.ts): delivered; tried again on the schedule (Retry-After honoured on 429 and 503); kept
 * as FAILED after the last attempt; 410 disables the endpoint, and so does failing continuously
 * for `disableAfterMs`.
 */

/** Sends a signed delivery: `OutboundClient.post` under the webhook address policy. */
export type Send = (url: string, body: string, headers: Record<string, string>) => Promise<OutboundAnswer>;

export interface WebhookDeliveriesOptions {
  endpoints: EndpointStore;
  queue: DeliveryStore;
  send: Send;
  /** An endpoint failing without a success for this long is disabled. @default 3 days */
  disableAfterMs?: number;
  /** Attempts in flight at once, across endpoints. @default 16 */
  concurrency?: number;
  /** The pause before each attempt. @default RETRY_SCHEDULE_MS */
  schedule?: readonly number[];
  /** For the jitter (tests fix it). @default Math.random */
  random?: () => number;
  logger?: { info(details: object, message: string): void; warn(details: object, message: string): void };
  /**
   * Look at the queue at least this often (ms): with a queue shared by replicas, deliveries queued
   * by another replica, or let go by one that died, are seen within it. Unset: only when woken.
   */
  pollMs?: number;
  /** Told what each attempt came to (metrics). */
  attempted?: (licenseeId: string, outcome: AttemptOutcome) => void;
  /**
   * Logs the loss of the queue's store and its return, once each (gateway-webhooks.ts names Redis).
   * @default one on `logger`, naming the webhook queue
   */
  outage?: OutageLog;
  /**
   * Logs, once each, that told changes are kept (the stores failed) and that they were queued.
   * @default one on `logger`, naming the webhook queue
   */
  keeping?: OutageLog;
  /** Changes kept per licensee while the stores fail. @default MAX_KEPT_CHANGES */
  maxKept?: number;
  /** Told how many kept changes of a licensee were dropped, past `maxKept` (metrics). */
  dropped?: (licenseeId: string, count: number) => void;
}

export const DISABLE_AFTER_MS = 3 * 24 * 60 * 60 * 1_000;

/**
 * Changes kept per licensee while the endpoint store or the queue fails (Redis away): the bound of
 * the changes a feed keeps meanwhile to publish (redis-registry.ts), mostly the same objects. Past
 * it the oldest go first.
 */
export const MAX_KEPT_CHANGES = 10_000;

/** A change told, until it is queued: when it was told, and whether it waited (a try to queue it failed). */
interface Told {
  change: ReservationChange;
  at: number;
  waited: boolean;
}

/** Why an attempt got no answer, in words for the endpoint's licensee (no internal detail). */
function failureOf(error: unknown): string {
  if (error instanceof AddressRefusedError) return `refused: ${error.message}`;
  const message = error instanceof Error ? error.message : '';
  if (/timeout|aborted/i.test(message)) return 'no answer in time';
  return 'no answer (the connection failed)';
}

export class WebhookDeliveries {
  private readonly endpoints: EndpointStore;
  private readonly queue: DeliveryStore;
  private readonly send: Send;
  private readonly disableAfterMs: number;
  private readonly concurrency: number;
  private readonly schedule: readonly number[];
  private readonly random: () => number;
  /** A poll each `pollMs` while the store is away would log each look: its loss is logged once. */
  private readonly outage: OutageLog;
  private readonly keeping: OutageLog;
  private readonly maxKept: number;
  /** Per licensee, the changes told and not yet queued, in the order told. */
  private readonly told = new Map<string, Told[]>();
  /** Licensees whose kept changes were dropped since they were last all queued (logged once). */
  private readonly dropping = new Set<string>();
  /** The passes queueing what is kept, one after another (see `flush`). */
  private flushing?: Promise<void>;
  private flushAgain = false;
  private retry?: NodeJS.Timeout;
  private inFlight = 0;
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;
  private running = false;
  /** A wake while a run was under way: that run looks again before it ends. */
  private again = false;
  private closed = false;
  /** Attempts under way, awaited by `idle` and `close`. */
  private readonly attempts = new Set<Promise<void>>();

  constructor(private readonly options: WebhookDeliveriesOptions) {
    this.endpoints = options.endpoints;
    this.queue = options.queue;
    this.send = options.send;
    this.disableAfterMs = options.disableAfterMs ?? DISABLE_AFTER_MS;
    this.concurrency = options.concurrency ?? 16;
    this.schedule = options.schedule ?? RETRY_SCHEDULE_MS;
    this.random = options.random ?? Math.random;
    this.outage =
      options.outage ??
      new OutageLog(options.logger, {
        lost: 'webhook queue unreachable: deliveries wait until it answers again',
        back: 'webhook queue reachable again: deliveries go on',
      });
    this.keeping =
      options.keeping ??
      new OutageLog(options.logger, {
        lost: 'webhook queue unreachable: changes are kept until it answers again',
        back: 'webhook queue reachable again: the changes kept meanwhile are queued',
      });
    this.maxKept = options.maxKept ?? MAX_KEPT_CHANGES;
  }

  /**
   * Queues `changes` of `licenseeId` (one feed's, in modification order) for the endpoints that
   * want them, each with its reservation's sequence, shared by every endpoint. While the endpoint
   * store or the queue fails (Redis away), they are kept, after those kept before, and queued in
   * that order once it answers (a try each second); never rejects.
   */
  async tell(licenseeId: string, changes: readonly ReservationChange[]): Promise<void> {
    const at = Date.now();
    this.keep(licenseeId, [
      ...(this.told.get(licenseeId) ?? []),
      ...changes.map((change) => ({ change, at, waited: false })),
    ]);
    await this.flush();
    this.wake();
  }

  /** Sets what is kept of the licensee, in order; past `maxKept` the oldest go (counted, and logged once). */
  private keep(licenseeId: string, told: Told[]): void {
    const over = told.length - this.maxKept;
    if (over > 0) {
      told.splice(0, over);
      this.options.dropped?.(licenseeId, over);
      if (!this.dropping.has(licenseeId)) {
        this.dropping.add(licenseeId);
        this.options.logger?.warn(
          { licensee: licenseeId, kept: this.maxKept },
          'webhook changes dropped: more were told than are kept while the queue is unreachable (the oldest go first)',
        );
      }
    }
    if (told.length > 0) this.told.set(licenseeId, told);
    else this.told.delete(licenseeId);
  }

  /** Queues what is kept, one pass at a time: a tell during a pass gets another pass after it. */
  private flush(): Promise<void> {
    this.flushAgain = true;
    this.flushing ??= this.flushPasses();
    return this.flushing;
  }

  private async flushPasses(): Promise<void> {
    try {
      while (this.flushAgain && !this.closed) {
        this.flushAgain = false;
        await this.flushPass();
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** Queues each licensee's kept changes in order, up to the first that fails: it and the rest wait for the next try. */
  private async flushPass(): Promise<void> {
    clearTimeout(this.retry);
    let failure: unknown;
    for (const licenseeId of [...this.told.keys()]) {
      const told = this.told.get(licenseeId) ?? [];
      this.told.delete(licenseeId);
      const endpointsOf = new Map<number, WebhookEndpoint[]>();
      let queued = 0;
      try {
        for (const each of told) {
          await this.queueChange(licenseeId, each, endpointsOf);
          queued++;
        }
        if (!this.told.has(licenseeId)) this.dropping.delete(licenseeId);
      } catch (error) {
        failure ??= error;
        // The rest go before what was told meanwhile (the order told is the order queued), each as
        // one that waited: a replica may have told a later state of its reservation meanwhile.
        const rest = [...told.slice(queued), ...(this.told.get(licenseeId) ?? [])];
        this.keep(
          licenseeId,
          rest.map((each) => ({ ...each, waited: true })),
        );
      }
    }
    if (failure === undefined) this.keeping.answered();
    else if (!this.closed) {
      this.keeping.failed(failure);
      this.retry = setTimeout(() => void this.flush().then(() => this.wake()), 1_000);
      this.retry.unref?.();
    }
  }

  /**
   * Queues one change for the endpoints of its event and kind. Its sequence comes first, and is the
   * same however often the change is told (by two replicas, or again after a failure midway), so
   * the queue, which takes a change told twice once (same webhook-id), gets one body for it.
   */
  private async queueChange(
    licenseeId: string,
    { change, at, waited }: Told,
    endpointsOf: Map<number, WebhookEndpoint[]>,
  ): Promise<void> {
    const { eventId, reservationNumber } = change.reservation;
    let endpoints = endpointsOf.get(eventId);
    if (!endpoints) endpointsOf.set(eventId, (endpoints = await this.endpoints.forEvent(licenseeId, eventId)));
    const wanting = endpoints.filter((endpoint) => endpoint.kinds.includes(change.kind));
    if (wanting.length === 0) return;
    const ask = { key: change.key, toldAt: at, waited };
    const sequence = await this.endpoints.sequenceOf(licenseeId, eventId, reservationNumber, ask);
    // Superseded while it waited: a later state of the reservation went to the endpoints meanwhile.
    if (sequence === undefined) return;
    const body = JSON.stringify(reservationMessage(licenseeId, change, sequence, new Date(at)));
    for (const endpoint of wanting)
      await this.queue.add(
        {
          endpointId: endpoint.id,
          licenseeId,
          messageId: messageId(endpoint.id, change.key),
          lane: `${eventId}:${reservationNumber}`,
          type: TYPE_OF_KIND[change.kind],
          body,
        },
        at,
      );
  }

  /**
   * Queues to one endpoint the changes of a replay (`recoverWebhookEndpoint`), in order, each one it
   * has not already had: a change already queued or sent to it (same webhook-id) is left alone, so
   * a replay repeats nothing the endpoint received. Answers how many were queued.
   */
  async replay(endpoint: WebhookEndpoint, changes: readonly ReservationChange[]): Promise<number> {
    const now = Date.now();
    const { licenseeId } = endpoint;
    let queued = 0;
    for (const change of changes) {
      if (!endpoint.kinds.includes(change.kind)) continue;
      const id = messageId(endpoint.id, change.key);
      if (await this.queue.has(endpoint.id, id)) continue;
      const { eventId, reservationNumber } = change.reservation;
      // The change's own sequence: the one its other endpoints had, or the next (never superseded: it did not wait).
      const ask = { key: change.key, toldAt: now, waited: false };
      const sequence = (await this.endpoints.sequenceOf(licenseeId, eventId, reservationNumber, ask)) as number;
      const body = JSON.stringify(reservationMessage(licenseeId, change, sequence, new Date(now)));
      const lane = `${eventId}:${reservationNumber}`;
      const type = TYPE_OF_KIND[change.kind];
      const { added } = await this.queue.add(
        { endpointId: endpoint.id, licenseeId, messageId: id, lane, type, body },
        now,
      );
      if (added) queued++;
    }
    this.wake();
    return queued;
  }

  /** Queues a signed `webhook.test` to the endpoint (in a lane of its own); undefined when the licensee has no such endpoint. */
  async ping(licenseeId: string, endpointId: string): Promise<Delivery | undefined> {
    const endpoint = await this.endpoints.get(licenseeId, endpointId);
    if (!endpoint) return undefined;
    const now = Date.now();
    const { delivery } = await this.queue.add(
      {
        endpointId,
        licenseeId,
        messageId: messageId(endpointId, `test:${now}:${this.random()}`),
        type: 'webhook.test',
        body: JSON.stringify(testMessage(endpointId, new Date(now))),
      },
      now,
      true,
    );
    this.wake();
    return delivery;
  }

  /** Queues a delivery again, same body and `webhook-id`, in a lane of its own; undefined when the licensee has no such delivery. */
  async redeliver(licenseeId: string, deliveryId: string): Promise<Delivery | undefined> {
    const original = await this.queue.get(licenseeId, deliveryId);
    if (!original || !(await this.endpoints.get(licenseeId, original.endpointId))) return undefined;
    const { endpointId, messageId: id, type, body } = original;
    const { delivery } = await this.queue.add({ endpointId, licenseeId, messageId: id, type, body }, Date.now(), true);
    this.wake();
    return delivery;
  }

  /** Serves the endpoint's lanes again (it was enabled). */
  async resume(endpointId: string): Promise<void> {
    await this.queue.resume(endpointId);
    this.wake();
  }

  /** Holds the endpoint's lanes (it was disabled): its deliveries wait for it to be enabled. */
  async pause(endpointId: string): Promise<void> {
    await this.queue.pause(endpointId);
  }

  /** Looks for due deliveries now (at start, after queueing, after an attempt). */
  wake(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    void this.run();
  }

  private async run(): Promise<void> {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.again = false;
    try {
      while (this.inFlight < this.concurrency) {
        const due = await this.queue.due(Date.now(), this.concurrency - this.inFlight);
        if (due.length === 0) break;
        let started = 0;
        for (const delivery of due) {
          if (!(await this.queue.claim(delivery.id, Date.now()))) continue;
          started++;
          this.inFlight++;
          const attempt = this.attempt(delivery)
            .catch(async (error: unknown) => {
              // The store failed mid-attempt: the delivery is let go and tried again when next due.
              this.outage.failed(error, { delivery: delivery.id });
              await this.queue.release(delivery.id).catch(() => undefined);
            })
            .finally(() => {
              this.inFlight--;
              this.attempts.delete(attempt);
              this.wake();
            });
          this.attempts.add(attempt);
        }
        if (started === 0) break;
      }
      await this.arm();
      this.outage.answered();
    } catch (error) {
      // Tried again in a second, and each second while the store is away: logged once, not each time.
      this.outage.failed(error);
      this.armAt(Date.now() + 1_000);
    } finally {
      this.running = false;
    }
    if (this.again) void this.run();
  }

  /** A timer for the next delivery due (none while the concurrency is used up: an attempt's end wakes it). */
  private async arm() {
    if (this.inFlight >= this.concurrency) return;
    const next = (await this.queue.nextDue()) ?? Infinity;
    const poll = this.options.pollMs === undefined ? Infinity : Date.now() + this.options.pollMs;
    if (Math.min(next, poll) < Infinity) this.armAt(Math.min(next, poll));
  }

  private armAt(at: number) {
    if (this.closed || at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.wake(), Math.max(0, at - Date.now()));
    this.timer.unref?.();
  }

  /** One attempt of a claimed delivery, and what follows from its answer. */
  private async attempt(delivery: Delivery): Promise<void> {
    const endpoint = await this.endpoints.get(delivery.licenseeId, delivery.endpointId);
    if (!endpoint) return this.queue.dropEndpoint(delivery.endpointId);
    if (!endpoint.enabled) {
      await this.queue.pause(endpoint.id);
      return this.queue.release(delivery.id);
    }
    const at = Date.now();
    const secrets = endpoint.secrets.filter((secret) => secret.until === undefined || secret.until > at);
    const headers = signedHeaders(
      secrets.map((secret) => secret.value),
      delivery.messageId,
      Math.floor(at / 1_000),
      delivery.body,
    );
    let answer: OutboundAnswer | undefined;
    let error: string | undefined;
    try {
      answer = await this.send(endpoint.url, delivery.body, headers);
    } catch (failure) {
      error = failureOf(failure);
    }
    const now = Date.now();
    const attempt: DeliveryAttempt = {
      at,
      status: answer?.status ?? null,
      latencyMs: answer?.latencyMs ?? now - at,
      ...(error === undefined ? {} : { error }),
    };
    const verdict = answer ? verdictOf(answer.status) : 'retry';
    if (verdict === 'delivered') {
      this.options.attempted?.(delivery.licenseeId, 'delivered');
      await this.queue.settle(delivery.id, attempt, { status: 'SUCCEEDED' });
      if (endpoint.failingSince !== null) await this.endpoints.save({ ...endpoint, failingSince: null });
      return;
    }
    if (verdict === 'gone') {
      this.options.attempted?.(delivery.licenseeId, 'gone');
      await this.queue.settle(delivery.id, attempt, { status: 'FAILED' });
      return this.disable(endpoint, 'the endpoint answered 410 Gone');
    }
    const attemptsMade = delivery.attempts.length + 1;
    let pause = pauseBefore(attemptsMade, this.random, this.schedule);
    const asked = answer && honoursRetryAfter(answer.status) ? retryAfterMs(answer.retryAfter, now) : undefined;
    if (pause !== undefined && asked !== undefined) pause = Math.max(pause, asked);
    this.options.attempted?.(delivery.licenseeId, pause === undefined ? 'failed' : 'retrying');
    await this.queue.settle(
      delivery.id,
      attempt,
      pause === undefined ? { status: 'FAILED' } : { status: 'PENDING', nextAttemptAt: now + pause },
    );
    const failingSince = endpoint.failingSince ?? at;
    if (now - failingSince >= this.disableAfterMs)
      return this.disable(
        { ...endpoint, failingSince },
        `every attempt failed since ${new Date(failingSince).toISOString()} (${Math.round(this.disableAfterMs / 3_600_000)} h)`,
      );
    if (endpoint.failingSince === null) await this.endpoints.save({ ...endpoint, failingSince });
  }

  private async disable(endpoint: WebhookEndpoint, reason: string): Promise<void> {
    await this.endpoints.save({ ...endpoint, enabled: false, disabledReason: reason });
    await this.queue.pause(endpoint.id);
    this.options.logger?.info(
      { endpoint: endpoint.id, licensee: endpoint.licenseeId, reason },
      'webhook endpoint disabled',
    );
  }

  /** Resolves once no attempt is under way (tests, shutdown). */
  async idle(): Promise<void> {
    // A macrotask each turn: a run waiting on I/O (a Redis store) must get its answer.
    while (this.attempts.size > 0 || this.running)
      await Promise.all([...this.attempts, new Promise<void>((resolve) => setImmediate(resolve))]);
  }

  /**
   * Stops trying; attempts under way finish. What is queued stays queued (in memory: lost with the
   * process); changes kept unqueued (the stores failed) are lost with it.
   */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.retry);
    await Promise.all(this.attempts);
  }
}

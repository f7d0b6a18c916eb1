import { randomBytes } from 'node:crypto';
import type { WebhookType } from './message.ts';

/**
 * The delivery queue's records. A delivery waits in a lane: one lane per endpoint and reservation
 * (a ping or a redelivery has a lane of its own), and only the head of a lane is tried, so a
 * delivery that keeps failing holds back the later changes of its reservation and nothing else.
 * A lane's head leaves it when it succeeds, or when its last attempt failed (it is kept as FAILED,
 * redeliverable) and the next one goes on.
 *
 * This is the in-memory queue (one process; everything is lost when it stops). The interface is
 * what a Redis one must give (docs/webhooks.md, "The queue on Redis"): `due` and `claim` over a
 * sorted set of lane heads by next attempt, a claim held under a lease so that another replica
 * takes a delivery over when its claimer dies.
 */

export type DeliveryStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';

export interface DeliveryAttempt {
  /** When it was sent (ms since the epoch). */
  at: number;
  /** The answer's status; null when there was none (refused address, connection failure, timeout). */
  status: number | null;
  latencyMs: number;
  /** Why there was no answer, in words safe to show to the endpoint's licensee. */
  error?: string;
}

export interface Delivery {
  /** `dlv_…` */
  id: string;
  endpointId: string;
  licenseeId: string;
  /** The `webhook-id`, the same on every attempt (and on a redelivery). */
  messageId: string;
  /** The lane it waits in, within its endpoint (`<eventId>:<reservationNumber>`, or its own id). */
  lane: string;
  type: WebhookType;
  /** The JSON body, as signed and sent on every attempt. */
  body: string;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  /** When it is next due (ms); meaningful while PENDING. */
  nextAttemptAt: number;
  createdAt: number;
  /** Order of arrival in the store: lanes are served in it, and listings page by it. */
  position: number;
}

export type NewDelivery = Pick<Delivery, 'endpointId' | 'licenseeId' | 'messageId' | 'type' | 'body'> & {
  /** The lane; a lane of its own when unset. */
  lane?: string;
};

export interface DeliveryStore {
  /**
   * Queues a delivery at the end of its lane, due at once (its lane allowing). Unless `again`, a
   * message the endpoint already has (pending or done) is not queued twice: the existing one is
   * answered, with `added` false.
   */
  add(delivery: NewDelivery, now: number, again?: boolean): Promise<{ delivery: Delivery; added: boolean }>;
  /** Up to `limit` lane heads due at `now`, not claimed, of endpoints not paused; oldest first. */
  due(now: number, limit: number): Promise<Delivery[]>;
  /** When the earliest lane head not claimed, of an endpoint not paused, is due; undefined when none waits. */
  nextDue(): Promise<number | undefined>;
  /** Takes a delivery due at `now` for an attempt; false when another took it (or it is not due). */
  claim(id: string, now: number): Promise<boolean>;
  /** Records an attempt and what follows: PENDING again at `nextAttemptAt`, or SUCCEEDED / FAILED (it leaves its lane). Releases the claim. */
  settle(
    id: string,
    attempt: DeliveryAttempt | undefined,
    next: { status: DeliveryStatus; nextAttemptAt?: number },
  ): Promise<void>;
  /** Releases a claim with nothing recorded (the endpoint turned out disabled). */
  release(id: string): Promise<void>;
  /** No lane of the endpoint is served while paused (disabled endpoints); its deliveries wait. */
  pause(endpointId: string): Promise<void>;
  resume(endpointId: string): Promise<void>;
  get(licenseeId: string, id: string): Promise<Delivery | undefined>;
  /** Whether the endpoint has (or had, among the deliveries kept) a delivery of this message. */
  has(endpointId: string, messageId: string): Promise<boolean>;
  /** The endpoint's deliveries, newest first, after `after` (a position), of `status` if given. */
  list(endpointId: string, options: { first: number; after?: number; status?: DeliveryStatus }): Promise<Delivery[]>;
  /** Deliveries waiting for the endpoint, and since when the oldest has waited (ms; undefined when none). */
  backlog(endpointId: string): Promise<{ pending: number; oldestCreatedAt: number | undefined }>;
  /** Forgets every delivery of a deleted endpoint. */
  dropEndpoint(endpointId: string): Promise<void>;
  close(): Promise<void>;
}

/** Finished deliveries kept per endpoint for listing and redelivery (the oldest are forgotten first). */
export const KEPT_PER_ENDPOINT = 1_000;

export const newDeliveryId = () => `dlv_${randomBytes(12).toString('base64url')}`;

/** A new delivery of `input`, due `now`, `position`th in the queue's order of arrival. */
export function newDelivery(input: NewDelivery, now: number, position: number): Delivery {
  const id = newDeliveryId();
  return {
    ...input,
    id,
    lane: input.lane ?? id,
    status: 'PENDING',
    attempts: [],
    nextAttemptAt: now,
    createdAt: now,
    position,
  };
}

export class MemoryDeliveryStore implements DeliveryStore {
  private readonly deliveries = new Map<string, Delivery>();
  /** endpoint → lane → the lane's pending delivery ids, in order. */
  private readonly lanes = new Map<string, Map<string, string[]>>();
  /** endpoint → its deliveries' ids in arrival order (pending and kept). */
  private readonly byEndpoint = new Map<string, string[]>();
  private readonly claimed = new Set<string>();
  private readonly paused = new Set<string>();
  /** `endpoint id` + NUL + `message id` → the delivery queued for it first. */
  private readonly byMessage = new Map<string, string>();
  /**
   * Lane heads by when they are due, then by arrival: entries are pushed when a delivery becomes a
   * head, is rescheduled, released or resumed, and dropped lazily when they no longer hold (claimed,
   * paused, settled, rescheduled), so `due` never walks every lane (10,000 lanes: 1,000
   * reservations to 10 endpoints).
   */
  private readonly ready = new HeadHeap();
  private positions = 0;

  constructor(private readonly kept = KEPT_PER_ENDPOINT) {}

  async has(endpointId: string, messageId: string): Promise<boolean> {
    return this.byMessage.has(`${endpointId}\u0000${messageId}`);
  }

  async add(input: NewDelivery, now: number, again = false): Promise<{ delivery: Delivery; added: boolean }> {
    const messageKey = `${input.endpointId}\u0000${input.messageId}`;
    const existing = again ? undefined : this.deliveries.get(this.byMessage.get(messageKey) ?? '');
    if (existing) return { delivery: structuredClone(existing), added: false };
    const delivery = newDelivery(input, now, ++this.positions);
    const { id } = delivery;
    if (!this.byMessage.has(messageKey)) this.byMessage.set(messageKey, id);
    this.deliveries.set(id, delivery);
    this.idsOf(input.endpointId).push(id);
    let lanes = this.lanes.get(input.endpointId);
    if (!lanes) this.lanes.set(input.endpointId, (lanes = new Map()));
    const lane = lanes.get(delivery.lane);
    if (lane) lane.push(id);
    else {
      lanes.set(delivery.lane, [id]);
      this.ready.push(delivery);
    }
    return { delivery: structuredClone(delivery), added: true };
  }

  private idsOf(endpointId: string): string[] {
    let ids = this.byEndpoint.get(endpointId);
    if (!ids) this.byEndpoint.set(endpointId, (ids = []));
    return ids;
  }

  /** Whether a heap entry still stands for a head that may be tried. */
  private holds(entry: HeapEntry): boolean {
    const delivery = this.deliveries.get(entry.id);
    if (!delivery || delivery.status !== 'PENDING' || delivery.nextAttemptAt !== entry.at) return false;
    if (this.claimed.has(entry.id) || this.paused.has(delivery.endpointId)) return false;
    return this.lanes.get(delivery.endpointId)?.get(delivery.lane)?.[0] === entry.id;
  }

  async due(now: number, limit: number): Promise<Delivery[]> {
    const found: HeapEntry[] = [];
    while (found.length < limit) {
      const top = this.ready.peek();
      if (!top || top.at > now) break;
      this.ready.pop();
      if (this.holds(top) && !found.some((entry) => entry.id === top.id)) found.push(top);
    }
    // Looking is not taking: what is answered stays due until it is claimed.
    for (const entry of found) this.ready.pushEntry(entry);
    return found.map((entry) => structuredClone(this.deliveries.get(entry.id) as Delivery));
  }

  async nextDue(): Promise<number | undefined> {
    for (let top = this.ready.peek(); top; top = this.ready.peek()) {
      if (this.holds(top)) return top.at;
      this.ready.pop();
    }
    return undefined;
  }

  async claim(id: string, _now?: number): Promise<boolean> {
    if (this.claimed.has(id) || this.deliveries.get(id)?.status !== 'PENDING') return false;
    this.claimed.add(id);
    return true;
  }

  async settle(
    id: string,
    attempt: DeliveryAttempt | undefined,
    next: { status: DeliveryStatus; nextAttemptAt?: number },
  ): Promise<void> {
    this.claimed.delete(id);
    const delivery = this.deliveries.get(id);
    if (!delivery) return;
    if (attempt) delivery.attempts.push(attempt);
    delivery.status = next.status;
    if (next.nextAttemptAt !== undefined) delivery.nextAttemptAt = next.nextAttemptAt;
    if (next.status === 'PENDING') return this.ready.push(delivery);
    const lanes = this.lanes.get(delivery.endpointId);
    const lane = lanes?.get(delivery.lane);
    if (lane) {
      lane.splice(lane.indexOf(id), 1);
      if (lane.length === 0) lanes?.delete(delivery.lane);
      const head = lane[0] === undefined ? undefined : this.deliveries.get(lane[0]);
      if (head) this.ready.push(head);
    }
    this.forgetOldest(delivery.endpointId);
  }

  /** Keeps at most `kept` finished deliveries of an endpoint. */
  private forgetOldest(endpointId: string) {
    const ids = this.idsOf(endpointId);
    let finished = ids.filter((id) => this.deliveries.get(id)?.status !== 'PENDING').length;
    for (let index = 0; finished > this.kept && index < ids.length; ) {
      const id = ids[index] as string;
      if (this.deliveries.get(id)?.status === 'PENDING') {
        index++;
        continue;
      }
      ids.splice(index, 1);
      this.forget(id);
      finished--;
    }
  }

  private forget(id: string) {
    const delivery = this.deliveries.get(id);
    if (!delivery) return;
    this.deliveries.delete(id);
    this.claimed.delete(id);
    const messageKey = `${delivery.endpointId}\u0000${delivery.messageId}`;
    if (this.byMessage.get(messageKey) === id) this.byMessage.delete(messageKey);
  }

  async release(id: string): Promise<void> {
    this.claimed.delete(id);
    const delivery = this.deliveries.get(id);
    if (delivery) this.ready.push(delivery);
  }

  async pause(endpointId: string): Promise<void> {
    this.paused.add(endpointId);
  }

  async resume(endpointId: string): Promise<void> {
    this.paused.delete(endpointId);
    for (const ids of this.lanes.get(endpointId)?.values() ?? []) {
      const head = ids[0] === undefined ? undefined : this.deliveries.get(ids[0]);
      if (head) this.ready.push(head);
    }
  }

  async get(licenseeId: string, id: string): Promise<Delivery | undefined> {
    const delivery = this.deliveries.get(id);
    return delivery?.licenseeId === licenseeId ? structuredClone(delivery) : undefined;
  }

  async list(
    endpointId: string,
    { first, after, status }: { first: number; after?: number; status?: DeliveryStatus },
  ): Promise<Delivery[]> {
    const found: Delivery[] = [];
    const ids = this.byEndpoint.get(endpointId) ?? [];
    for (let index = ids.length - 1; index >= 0 && found.length < first; index--) {
      const delivery = this.deliveries.get(ids[index] as string);
      if (!delivery || (after !== undefined && delivery.position >= after)) continue;
      if (status === undefined || delivery.status === status) found.push(structuredClone(delivery));
    }
    return found;
  }

  async backlog(endpointId: string): Promise<{ pending: number; oldestCreatedAt: number | undefined }> {
    let pending = 0;
    let oldestCreatedAt: number | undefined;
    for (const ids of this.lanes.get(endpointId)?.values() ?? []) {
      pending += ids.length;
      const head = this.deliveries.get(ids[0] as string);
      if (head && (oldestCreatedAt === undefined || head.createdAt < oldestCreatedAt)) oldestCreatedAt = head.createdAt;
    }
    return { pending, oldestCreatedAt };
  }

  async dropEndpoint(endpointId: string): Promise<void> {
    for (const id of this.byEndpoint.get(endpointId) ?? []) this.forget(id);
    this.byEndpoint.delete(endpointId);
    this.lanes.delete(endpointId);
    this.paused.delete(endpointId);
  }

  async close(): Promise<void> {}
}

interface HeapEntry {
  at: number;
  position: number;
  id: string;
}

/** A binary min-heap of lane heads by due time, then arrival. */
class HeadHeap {
  private readonly entries: HeapEntry[] = [];

  push(delivery: Delivery): void {
    this.pushEntry({ at: delivery.nextAttemptAt, position: delivery.position, id: delivery.id });
  }

  pushEntry(entry: HeapEntry): void {
    const { entries } = this;
    entries.push(entry);
    for (let index = entries.length - 1; index > 0; ) {
      const parent = (index - 1) >> 1;
      if (!before(entries[index]!, entries[parent]!)) break;
      [entries[index], entries[parent]] = [entries[parent]!, entries[index]!];
      index = parent;
    }
  }

  peek(): HeapEntry | undefined {
    return this.entries[0];
  }

  pop(): HeapEntry | undefined {
    const { entries } = this;
    const top = entries[0];
    const last = entries.pop();
    if (entries.length === 0 || last === undefined) return top;
    entries[0] = last;
    for (let index = 0; ; ) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      if (left < entries.length && before(entries[left]!, entries[smallest]!)) smallest = left;
      if (right < entries.length && before(entries[right]!, entries[smallest]!)) smallest = right;
      if (smallest === index) break;
      [entries[index], entries[smallest]] = [entries[smallest]!, entries[index]!];
      index = smallest;
    }
    return top;
  }
}

const before = (a: HeapEntry, b: HeapEntry) => a.at < b.at || (a.at === b.at && a.position < b.position);

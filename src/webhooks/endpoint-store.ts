import type { ChangeKind } from '../changes/change.ts';
import type { RedisConnection } from '../redis/connection.ts';
import { isSealed, type SecretBox } from './secret-box.ts';

/**
 * Where webhook endpoints are kept: in this process (MemoryEndpointStore), or in Redis for every
 * replica (RedisEndpointStore), behind one interface, as the callback store is. Every read names
 * the licensee: an endpoint of another licensee is not found, whatever its id.
 */

/** A signing secret; a previous one signs too until `until` (ms since the epoch), while a receiver rotates. */
export interface EndpointSecret {
  value: string;
  until?: number;
}

export interface WebhookEndpoint {
  /** `ep_…`, unique across licensees. */
  id: string;
  /** The licensee (systemIdentifier) that registered it: the only one that sees, changes or receives from it. */
  licenseeId: string;
  url: string;
  eventIds: number[];
  /** The kinds of change sent (all three unless narrowed). */
  kinds: ChangeKind[];
  description: string | null;
  /** The current secret first, then any previous one still signing. */
  secrets: EndpointSecret[];
  enabled: boolean;
  /** Why it was disabled (by its client, by a 410, or after failing for too long); null while enabled. */
  disabledReason: string | null;
  /** When its current run of failed attempts began (ms); null after a success. */
  failingSince: number | null;
  createdAt: number;
}

export interface EndpointStore {
  save(endpoint: WebhookEndpoint): Promise<void>;
  /** The endpoint `id` of `licenseeId`; undefined for another licensee's or none. */
  get(licenseeId: string, id: string): Promise<WebhookEndpoint | undefined>;
  /** Forgets the endpoint; false when `licenseeId` has none of that id. */
  delete(licenseeId: string, id: string): Promise<boolean>;
  /** The licensee's endpoints, oldest first. */
  list(licenseeId: string): Promise<WebhookEndpoint[]>;
  /** The enabled endpoints of `licenseeId` registered for `eventId`. */
  forEvent(licenseeId: string, eventId: number): Promise<WebhookEndpoint[]>;
  /** The events of `licenseeId` with an enabled endpoint (their feeds run for them). */
  eventsWatched(licenseeId: string): Promise<number[]>;
  /**
   * The `sequence` of a change of a reservation, shared by the licensee's endpoints: the
   * reservation's next one (1, 2, …) the first time, the same one each time the change asks again
   * (told by two replicas around a hand-over of the webhooks lease, or again after a failure midway),
   * so that no change takes two and no endpoint sees a gap. Undefined for a change that `waited`
   * (kept while the store was unreachable) when a change of the reservation told after it was given
   * one meanwhile: its state is superseded, and queued now it would reach the endpoints as the newest.
   */
  sequenceOf(
    licenseeId: string,
    eventId: number,
    reservationNumber: number,
    change: ChangeTold,
  ): Promise<number | undefined>;
  close(): Promise<void>;
}

/** A change asking for its sequence: its key (`ReservationChange.key`), when it was told (ms), whether it waited for the store. */
export interface ChangeTold {
  key: string;
  toldAt: number;
  waited: boolean;
}

/** How long Redis remembers the sequence given to a change: far longer than two replicas telling it apart, or a kept change waiting for Redis. */
export const SEQUENCE_KEPT_MS = 24 * 60 * 60 * 1_000;

const byAge = (a: WebhookEndpoint, b: WebhookEndpoint) => a.createdAt - b.createdAt || a.id.localeCompare(b.id);

const watchedEvents = (endpoints: readonly WebhookEndpoint[]) =>
  [...new Set(endpoints.filter((endpoint) => endpoint.enabled).flatMap((endpoint) => endpoint.eventIds))].sort(
    (a, b) => a - b,
  );

export class MemoryEndpointStore implements EndpointStore {
  private readonly endpoints = new Map<string, WebhookEndpoint>();
  /**
   * Per reservation, the last sequence given, to which change, and the latest instant told. One
   * process asks again only for a change whose queueing failed, before any later change of its
   * reservation (kept changes are queued in order): the last change is all it must remember.
   */
  private readonly sequences = new Map<string, { last: number; key: string; toldAt: number }>();

  async save(endpoint: WebhookEndpoint): Promise<void> {
    this.endpoints.set(endpoint.id, structuredClone(endpoint));
  }

  async get(licenseeId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const endpoint = this.endpoints.get(id);
    return endpoint?.licenseeId === licenseeId ? structuredClone(endpoint) : undefined;
  }

  async delete(licenseeId: string, id: string): Promise<boolean> {
    if (this.endpoints.get(id)?.licenseeId !== licenseeId) return false;
    return this.endpoints.delete(id);
  }

  async list(licenseeId: string): Promise<WebhookEndpoint[]> {
    return [...this.endpoints.values()]
      .filter((endpoint) => endpoint.licenseeId === licenseeId)
      .sort(byAge)
      .map((endpoint) => structuredClone(endpoint));
  }

  async forEvent(licenseeId: string, eventId: number): Promise<WebhookEndpoint[]> {
    return (await this.list(licenseeId)).filter((endpoint) => endpoint.enabled && endpoint.eventIds.includes(eventId));
  }

  async eventsWatched(licenseeId: string): Promise<number[]> {
    return watchedEvents(await this.list(licenseeId));
  }

  async sequenceOf(
    licenseeId: string,
    eventId: number,
    reservationNumber: number,
    { key, toldAt, waited }: ChangeTold,
  ): Promise<number | undefined> {
    const reservation = `${licenseeId}|${eventId}|${reservationNumber}`;
    const before = this.sequences.get(reservation);
    if (before?.key === key) return before.last;
    if (waited && before && toldAt < before.toldAt) return undefined;
    const last = (before?.last ?? 0) + 1;
    this.sequences.set(reservation, { last, key, toldAt: Math.max(toldAt, before?.toldAt ?? toldAt) });
    return last;
  }

  async close(): Promise<void> {}
}

/**
 * KEYS: sequences, told, the change's sequence. ARGV: reservation, told at (ms), waited ('1'), kept (ms).
 * The change's sequence if it was given one; else 0 for a waited change told before the
 * reservation's latest; else the reservation's next.
 */
const SEQUENCE_OF = `
local given = redis.call('GET', KEYS[3])
if given then return tonumber(given) end
local latest = tonumber(redis.call('HGET', KEYS[2], ARGV[1]))
if ARGV[3] == '1' and latest and tonumber(ARGV[2]) < latest then return 0 end
local sequence = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
if not latest or tonumber(ARGV[2]) > latest then redis.call('HSET', KEYS[2], ARGV[1], ARGV[2]) end
redis.call('SET', KEYS[3], sequence, 'PX', ARGV[4])
return sequence
`;

type ScriptClient = RedisConnection['commands'] & {
  webhookSequenceOf(...args: (string | number)[]): Promise<number>;
};

/**
 * On Redis, under REDIS_PREFIX: `webhooks:endpoints` (a hash, id → the endpoint as JSON),
 * `webhooks:licensee:<id>` (a set of that licensee's endpoint ids), `webhooks:sequences` (a hash,
 * licensee|event|reservation → the last sequence given, HINCRBY so replicas never give one twice),
 * `webhooks:sequences-told` (the same fields → the latest instant a change given one was told) and
 * `webhooks:sequence:<licensee>|<event>|<change key>` (the sequence given to that change, for
 * SEQUENCE_KEPT_MS), each sequence given by one script. With WEBHOOK_SECRET_KEY, each endpoint's
 * signing secrets are sealed in its record (secret-box.ts).
 */
export class RedisEndpointStore implements EndpointStore {
  private readonly endpointsKey: string;
  private readonly sequencesKey: string;
  private readonly toldKey: string;

  /** `box`: endpoint secrets are sealed with it in Redis (WEBHOOK_SECRET_KEY); without one, kept in clear. */
  constructor(
    private readonly redis: RedisConnection,
    private readonly box?: SecretBox,
  ) {
    this.endpointsKey = `${redis.prefix}webhooks:endpoints`;
    this.sequencesKey = `${redis.prefix}webhooks:sequences`;
    this.toldKey = `${redis.prefix}webhooks:sequences-told`;
    const client = redis.commands;
    if (!('webhookSequenceOf' in client))
      client.defineCommand('webhookSequenceOf', { numberOfKeys: 3, lua: SEQUENCE_OF });
  }

  /** The record as Redis keeps it: its secrets sealed when there is a key. */
  private stored(endpoint: WebhookEndpoint): string {
    const { box } = this;
    if (!box) return JSON.stringify(endpoint);
    const secrets = endpoint.secrets.map((secret) => ({ ...secret, value: box.seal(secret.value, endpoint.id) }));
    return JSON.stringify({ ...endpoint, secrets });
  }

  /** The endpoint of a stored record, its secrets opened. */
  private parsed(text: string): WebhookEndpoint {
    const endpoint = JSON.parse(text) as WebhookEndpoint;
    const secrets = endpoint.secrets.map((secret) => {
      if (this.box) return { ...secret, value: this.box.open(secret.value, endpoint.id) };
      if (isSealed(secret.value))
        throw new Error(
          'webhook endpoint secrets in Redis are sealed: set WEBHOOK_SECRET_KEY to the key that sealed them',
        );
      return secret;
    });
    return { ...endpoint, secrets };
  }

  private licenseeKey(licenseeId: string) {
    return `${this.redis.prefix}webhooks:licensee:${licenseeId}`;
  }

  async save(endpoint: WebhookEndpoint): Promise<void> {
    await this.redis.commands
      .multi()
      .hset(this.endpointsKey, endpoint.id, this.stored(endpoint))
      .sadd(this.licenseeKey(endpoint.licenseeId), endpoint.id)
      .exec();
  }

  async get(licenseeId: string, id: string): Promise<WebhookEndpoint | undefined> {
    const text = await this.redis.commands.hget(this.endpointsKey, id);
    const endpoint = text ? this.parsed(text) : undefined;
    return endpoint?.licenseeId === licenseeId ? endpoint : undefined;
  }

  async delete(licenseeId: string, id: string): Promise<boolean> {
    // Its secrets are not opened: an endpoint sealed under a key since lost can still be deleted.
    const text = await this.redis.commands.hget(this.endpointsKey, id);
    if (!text || (JSON.parse(text) as WebhookEndpoint).licenseeId !== licenseeId) return false;
    await this.redis.commands.multi().hdel(this.endpointsKey, id).srem(this.licenseeKey(licenseeId), id).exec();
    return true;
  }

  async list(licenseeId: string): Promise<WebhookEndpoint[]> {
    const ids = await this.redis.commands.smembers(this.licenseeKey(licenseeId));
    if (ids.length === 0) return [];
    const texts = await this.redis.commands.hmget(this.endpointsKey, ...ids);
    return texts
      .filter((text): text is string => text !== null)
      .map((text) => this.parsed(text))
      .filter((endpoint) => endpoint.licenseeId === licenseeId)
      .sort(byAge);
  }

  async forEvent(licenseeId: string, eventId: number): Promise<WebhookEndpoint[]> {
    return (await this.list(licenseeId)).filter((endpoint) => endpoint.enabled && endpoint.eventIds.includes(eventId));
  }

  async eventsWatched(licenseeId: string): Promise<number[]> {
    return watchedEvents(await this.list(licenseeId));
  }

  async sequenceOf(
    licenseeId: string,
    eventId: number,
    reservationNumber: number,
    { key, toldAt, waited }: ChangeTold,
  ): Promise<number | undefined> {
    const sequence = await (this.redis.commands as ScriptClient).webhookSequenceOf(
      this.sequencesKey,
      this.toldKey,
      `${this.redis.prefix}webhooks:sequence:${licenseeId}|${eventId}|${key}`,
      `${licenseeId}|${eventId}|${reservationNumber}`,
      toldAt,
      waited ? '1' : '0',
      SEQUENCE_KEPT_MS,
    );
    return sequence === 0 ? undefined : sequence;
  }

  async close(): Promise<void> {}
}

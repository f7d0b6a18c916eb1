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
  /** The next `sequence` of a reservation's changes (1, 2, …), shared by the licensee's endpoints. */
  nextSequence(licenseeId: string, eventId: number, reservationNumber: number): Promise<number>;
  close(): Promise<void>;
}

const byAge = (a: WebhookEndpoint, b: WebhookEndpoint) => a.createdAt - b.createdAt || a.id.localeCompare(b.id);

const watchedEvents = (endpoints: readonly WebhookEndpoint[]) =>
  [...new Set(endpoints.filter((endpoint) => endpoint.enabled).flatMap((endpoint) => endpoint.eventIds))].sort(
    (a, b) => a - b,
  );

export class MemoryEndpointStore implements EndpointStore {
  private readonly endpoints = new Map<string, WebhookEndpoint>();
  private readonly sequences = new Map<string, number>();

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

  async nextSequence(licenseeId: string, eventId: number, reservationNumber: number): Promise<number> {
    const key = `${licenseeId}|${eventId}|${reservationNumber}`;
    const next = (this.sequences.get(key) ?? 0) + 1;
    this.sequences.set(key, next);
    return next;
  }

  async close(): Promise<void> {}
}

/**
 * On Redis, under REDIS_PREFIX: `webhooks:endpoints` (a hash, id → the endpoint as JSON),
 * `webhooks:licensee:<id>` (a set of that licensee's endpoint ids) and `webhooks:sequences` (a
 * hash, licensee|event|reservation → the last sequence given, HINCRBY so replicas never give one twice).
 * With WEBHOOK_SECRET_KEY, each endpoint's signing secrets are sealed in its record (secret-box.ts).
 */
export class RedisEndpointStore implements EndpointStore {
  private readonly endpointsKey: string;
  private readonly sequencesKey: string;

  /** `box`: endpoint secrets are sealed with it in Redis (WEBHOOK_SECRET_KEY); without one, kept in clear. */
  constructor(
    private readonly redis: RedisConnection,
    private readonly box?: SecretBox,
  ) {
    this.endpointsKey = `${redis.prefix}webhooks:endpoints`;
    this.sequencesKey = `${redis.prefix}webhooks:sequences`;
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

  async nextSequence(licenseeId: string, eventId: number, reservationNumber: number): Promise<number> {
    return this.redis.commands.hincrby(this.sequencesKey, `${licenseeId}|${eventId}|${reservationNumber}`, 1);
  }

  async close(): Promise<void> {}
}

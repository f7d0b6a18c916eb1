import { randomBytes } from 'node:crypto';
import { CHANGE_KINDS, type ChangeKind, type ReservationChange } from '../changes/change.ts';
import type { AddressPolicy } from '../deliveries/address-policy.ts';
import type { WebhookDeliveries } from './deliveries.ts';
import { type Delivery, type DeliveryStatus, type DeliveryStore, KEPT_PER_ENDPOINT } from './delivery-store.ts';
import type { EndpointStore, WebhookEndpoint } from './endpoint-store.ts';
import { newSecret } from './signature.ts';

/**
 * What the management API does, without GraphQL (src/resolvers/webhook.ts calls it): every
 * operation names the licensee it acts for, and an endpoint or delivery of another licensee is
 * answered as not found. What the client got wrong is a user error (the field, and what to do),
 * decided before anything is saved or sent.
 */

export interface UserError {
  /** The input field at fault (`["input", "url"]`), or null for the whole request. */
  field: string[] | null;
  message: string;
}

export interface EndpointInput {
  url?: string | null;
  eventIds?: readonly number[] | null;
  kinds?: readonly ChangeKind[] | null;
  description?: string | null;
}

/** Says whether the licensee's account has the event (the service answers another licensee's as not found). */
export type EventCheck = (eventId: number) => Promise<boolean>;

/** The changes of one of the licensee's events since an instant (ms): the current state of each reservation modified since, in modification order. */
export type ChangesSince = (eventId: number, since: number) => Promise<ReservationChange[]>;

/** How far back `recoverWebhookEndpoint` may reach. */
export const MAX_RECOVER_DAYS = 30;

export interface ManagementAudit {
  info(details: object, message: string): void;
}

export const MAX_ENDPOINTS_PER_LICENSEE = 20;
export const MAX_EVENTS_PER_ENDPOINT = 100;
export const MAX_URL_LENGTH = 2_048;
export const MAX_DESCRIPTION_LENGTH = 500;
/** The longest a previous secret may keep signing after a rotation. */
export const MAX_PREVIOUS_SECRET_SECONDS = 7 * 24 * 3_600;

const NOT_FOUND: UserError = { field: ['id'], message: 'No webhook endpoint of yours has this id.' };

type Outcome<T> = T & { userErrors: UserError[] };

export class WebhookManagement {
  constructor(
    private readonly deps: {
      endpoints: EndpointStore;
      queue: DeliveryStore;
      deliveries: WebhookDeliveries;
      policy: AddressPolicy;
      /** Told when a licensee's endpoints change (its feeds follow the events they watch). */
      changed?: (licenseeId: string) => void | Promise<void>;
      audit?: ManagementAudit;
    },
  ) {}

  list(licenseeId: string): Promise<WebhookEndpoint[]> {
    return this.deps.endpoints.list(licenseeId);
  }

  get(licenseeId: string, id: string): Promise<WebhookEndpoint | undefined> {
    return this.deps.endpoints.get(licenseeId, id);
  }

  deliveries(endpoint: WebhookEndpoint, options: { first: number; after?: number; status?: DeliveryStatus }) {
    return this.deps.queue.list(endpoint.id, options);
  }

  backlog(endpoint: WebhookEndpoint) {
    return this.deps.queue.backlog(endpoint.id);
  }

  async create(
    licenseeId: string,
    input: EndpointInput,
    eventExists: EventCheck,
    client: string,
  ): Promise<Outcome<{ endpoint?: WebhookEndpoint; secret?: string }>> {
    const userErrors = await this.validate(input, eventExists, true);
    if ((await this.deps.endpoints.list(licenseeId)).length >= MAX_ENDPOINTS_PER_LICENSEE)
      userErrors.push({
        field: null,
        message: `A licensee may have at most ${MAX_ENDPOINTS_PER_LICENSEE} webhook endpoints: delete one first.`,
      });
    if (userErrors.length > 0) return { userErrors };
    const secret = newSecret();
    const endpoint: WebhookEndpoint = {
      id: `ep_${randomBytes(12).toString('base64url')}`,
      licenseeId,
      url: (input.url as string).trim(),
      eventIds: [...new Set(input.eventIds as number[])],
      kinds: input.kinds?.length ? [...new Set(input.kinds)] : [...CHANGE_KINDS],
      description: input.description ?? null,
      secrets: [{ value: secret }],
      enabled: true,
      disabledReason: null,
      failingSince: null,
      createdAt: Date.now(),
    };
    await this.deps.endpoints.save(endpoint);
    await this.told(licenseeId, client, 'createWebhookEndpoint', endpoint.id);
    return { endpoint, secret, userErrors };
  }

  async update(
    licenseeId: string,
    id: string,
    input: EndpointInput,
    eventExists: EventCheck,
    client: string,
  ): Promise<Outcome<{ endpoint?: WebhookEndpoint }>> {
    const endpoint = await this.deps.endpoints.get(licenseeId, id);
    if (!endpoint) return { userErrors: [NOT_FOUND] };
    const userErrors = await this.validate(input, eventExists, false);
    if (userErrors.length > 0) return { userErrors };
    const updated: WebhookEndpoint = {
      ...endpoint,
      ...(input.url != null ? { url: input.url.trim() } : {}),
      ...(input.eventIds != null ? { eventIds: [...new Set(input.eventIds)] } : {}),
      ...(input.kinds != null ? { kinds: [...new Set(input.kinds)] } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
    };
    await this.deps.endpoints.save(updated);
    await this.told(licenseeId, client, 'updateWebhookEndpoint', id);
    return { endpoint: updated, userErrors };
  }

  async delete(licenseeId: string, id: string, client: string): Promise<Outcome<{ deletedId?: string }>> {
    if (!(await this.deps.endpoints.delete(licenseeId, id))) return { userErrors: [NOT_FOUND] };
    await this.deps.queue.dropEndpoint(id);
    await this.told(licenseeId, client, 'deleteWebhookEndpoint', id);
    return { deletedId: id, userErrors: [] };
  }

  async setEnabled(
    licenseeId: string,
    id: string,
    enabled: boolean,
    client: string,
  ): Promise<Outcome<{ endpoint?: WebhookEndpoint }>> {
    const endpoint = await this.deps.endpoints.get(licenseeId, id);
    if (!endpoint) return { userErrors: [NOT_FOUND] };
    const updated: WebhookEndpoint = enabled
      ? { ...endpoint, enabled: true, disabledReason: null, failingSince: null }
      : { ...endpoint, enabled: false, disabledReason: 'disabled by its client' };
    await this.deps.endpoints.save(updated);
    if (enabled) await this.deps.deliveries.resume(id);
    else await this.deps.deliveries.pause(id);
    await this.told(licenseeId, client, enabled ? 'enableWebhookEndpoint' : 'disableWebhookEndpoint', id);
    return { endpoint: updated, userErrors: [] };
  }

  async rotate(
    licenseeId: string,
    id: string,
    previousValidForSeconds: number,
    client: string,
  ): Promise<Outcome<{ endpoint?: WebhookEndpoint; secret?: string }>> {
    const endpoint = await this.deps.endpoints.get(licenseeId, id);
    if (!endpoint) return { userErrors: [NOT_FOUND] };
    if (
      !Number.isInteger(previousValidForSeconds) ||
      previousValidForSeconds < 0 ||
      previousValidForSeconds > MAX_PREVIOUS_SECRET_SECONDS
    )
      return {
        userErrors: [
          {
            field: ['previousSecretValidFor'],
            message: `Give a whole number of seconds from 0 to ${MAX_PREVIOUS_SECRET_SECONDS} (7 days).`,
          },
        ],
      };
    const secret = newSecret();
    const [current] = endpoint.secrets;
    const until = Date.now() + previousValidForSeconds * 1_000;
    const updated: WebhookEndpoint = {
      ...endpoint,
      secrets: [
        { value: secret },
        ...(current && previousValidForSeconds > 0 ? [{ value: current.value, until }] : []),
      ],
    };
    await this.deps.endpoints.save(updated);
    await this.told(licenseeId, client, 'rotateWebhookSecret', id);
    return { endpoint: updated, secret, userErrors: [] };
  }

  async ping(licenseeId: string, id: string, client: string): Promise<Outcome<{ delivery?: Delivery }>> {
    const delivery = await this.deps.deliveries.ping(licenseeId, id);
    if (!delivery) return { userErrors: [NOT_FOUND] };
    await this.told(licenseeId, client, 'pingWebhookEndpoint', id);
    return { delivery, userErrors: [] };
  }

  async redeliver(licenseeId: string, deliveryId: string, client: string): Promise<Outcome<{ delivery?: Delivery }>> {
    const delivery = await this.deps.deliveries.redeliver(licenseeId, deliveryId);
    if (!delivery)
      return { userErrors: [{ field: ['deliveryId'], message: 'No webhook delivery of yours has this id.' }] };
    await this.told(licenseeId, client, 'redeliverWebhook', delivery.endpointId);
    return { delivery, userErrors: [] };
  }

  /**
   * Recovers an endpoint after an outage of its receiver: enables it (when disabled), queues again
   * every delivery to it that FAILED since `since` (same body and `webhook-id`), and replays to it
   * the current state of each reservation of its events modified since `since` that it has not
   * already had (changes made while it was disabled were never queued for it). Nothing the
   * endpoint received is sent again. The reads come first: when one fails, nothing is changed.
   * With `eventIds`, only those of its events are read: a recovery in parts, each within an
   * operation's cost limit (the failed deliveries go with the first part; later parts find them queued).
   */
  async recover(
    licenseeId: string,
    id: string,
    since: number,
    changesSince: ChangesSince,
    client: string,
    /** Now, on the later of our clock and the service's. */
    now = Date.now(),
    /** Only these of its events (all of them when absent). */
    eventIds?: readonly number[] | null,
  ): Promise<Outcome<{ endpoint?: WebhookEndpoint; queued?: number }>> {
    const endpoint = await this.deps.endpoints.get(licenseeId, id);
    if (!endpoint) return { userErrors: [NOT_FOUND] };
    // A minute ahead is now: the service keeps whole minutes.
    if (!Number.isFinite(since) || since > now + 60_000 || since < now - MAX_RECOVER_DAYS * 86_400_000)
      return {
        userErrors: [
          { field: ['since'], message: `Give an instant in the past, at most ${MAX_RECOVER_DAYS} days ago.` },
        ],
      };
    const notItsOwn = eventIds?.filter((eventId) => !endpoint.eventIds.includes(eventId)) ?? [];
    if (eventIds?.length === 0 || notItsOwn.length > 0)
      return {
        userErrors: [
          {
            field: ['eventIds'],
            message:
              notItsOwn.length > 0
                ? `Not events of this endpoint: ${notItsOwn.join(', ')}. Name some of its events, or leave eventIds out for all.`
                : 'Name at least one of its events, or leave eventIds out for all.',
          },
        ],
      };
    const replay: ReservationChange[] = [];
    for (const eventId of eventIds ? [...new Set(eventIds)] : endpoint.eventIds)
      replay.push(...(await changesSince(eventId, since)));
    // Failed since then, oldest first, once per message, unless it was delivered (or is queued) since.
    const kept = (await this.deps.queue.list(id, { first: KEPT_PER_ENDPOINT })).reverse();
    const settledOrQueued = new Set(kept.filter((d) => d.status !== 'FAILED').map((d) => d.messageId));
    const failed = new Map<string, Delivery>();
    for (const delivery of kept)
      if (delivery.status === 'FAILED' && delivery.createdAt >= since && !settledOrQueued.has(delivery.messageId))
        failed.set(delivery.messageId, delivery);

    const recovered: WebhookEndpoint = endpoint.enabled
      ? endpoint
      : { ...endpoint, enabled: true, disabledReason: null, failingSince: null };
    if (!endpoint.enabled) {
      await this.deps.endpoints.save(recovered);
      await this.deps.deliveries.resume(id);
    }
    let queued = 0;
    for (const delivery of failed.values()) if (await this.deps.deliveries.redeliver(licenseeId, delivery.id)) queued++;
    queued += await this.deps.deliveries.replay(recovered, replay);
    await this.told(licenseeId, client, 'recoverWebhookEndpoint', id);
    return { endpoint: recovered, queued, userErrors: [] };
  }

  /** The audit line of a management mutation (no URL, no secret), and the feeds told. */
  private async told(licenseeId: string, client: string, action: string, endpointId: string) {
    this.deps.audit?.info({ licensee: licenseeId, client, action, endpoint: endpointId }, 'webhook management');
    await this.deps.changed?.(licenseeId);
  }

  private async validate(input: EndpointInput, eventExists: EventCheck, creating: boolean): Promise<UserError[]> {
    const errors: UserError[] = [];
    const { url, eventIds, kinds, description } = input;
    if (url != null || creating) {
      const text = (url ?? '').trim();
      const refused =
        text.length === 0
          ? 'Give the URL deliveries go to.'
          : text.length > MAX_URL_LENGTH
            ? `The URL is longer than ${MAX_URL_LENGTH} characters.`
            : await this.deps.policy.check(text);
      if (refused) errors.push({ field: ['input', 'url'], message: capitalised(refused) });
    }
    if (eventIds != null || creating) {
      const ids = eventIds ?? [];
      if (ids.length === 0 || ids.length > MAX_EVENTS_PER_ENDPOINT)
        errors.push({
          field: ['input', 'eventIds'],
          message: `Give from 1 to ${MAX_EVENTS_PER_ENDPOINT} event ids.`,
        });
      else if (ids.some((id) => !Number.isSafeInteger(id) || id <= 0))
        errors.push({ field: ['input', 'eventIds'], message: 'Event ids are positive whole numbers.' });
      else
        for (const id of new Set(ids))
          if (!(await eventExists(id)))
            errors.push({ field: ['input', 'eventIds'], message: `No event ${id} of your licensee.` });
    }
    if (kinds != null && kinds.length === 0)
      errors.push({ field: ['input', 'kinds'], message: 'Give at least one kind, or leave kinds out for all.' });
    if (description != null && description.length > MAX_DESCRIPTION_LENGTH)
      errors.push({
        field: ['input', 'description'],
        message: `The description is longer than ${MAX_DESCRIPTION_LENGTH} characters.`,
      });
    return errors;
  }
}

const capitalised = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;

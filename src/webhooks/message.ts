import { createHash } from 'node:crypto';
import type { ChangeKind, ReservationChange } from '../changes/change.ts';
import { encodeLicenseeGlobalId } from '../ids/global-id.ts';
import { readOrNull } from '../upstream/record-view.ts';
import { RESERVATION_STATUSES } from '../upstream/vocabulary.ts';

/**
 * What a webhook carries: the Standard Webhooks payload shape (`type`, `timestamp`, `data`) with
 * only what identifies a change and orders it. No personal data (names, emails, phones): the
 * receiver reads the reservation through the graph with its own credential.
 */

export const WEBHOOK_TYPES = ['reservation.created', 'reservation.changed', 'reservation.cancelled'] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number] | 'webhook.test';

export const TYPE_OF_KIND: Record<ChangeKind, WebhookType> = {
  CREATED: 'reservation.created',
  CHANGED: 'reservation.changed',
  CANCELLED: 'reservation.cancelled',
};

export interface ReservationWebhookData {
  eventId: number;
  reservationNumber: number;
  /** The reservation's Relay id, as the graph gives it to this licensee (`node(id:)`). */
  id: string;
  /** As the graph spells it (`ReservationStatus`: NEW, ACCEPTED, CANCELLED, DECLINED); null when unknown. */
  status: string | null;
  modifiedAt: string | null;
  /** Grows by one with each change of this reservation told to the licensee's endpoints. */
  sequence: number;
}

export interface WebhookMessage {
  type: WebhookType;
  /** When the gateway saw the change (ISO 8601), the same on every attempt. */
  timestamp: string;
  data: ReservationWebhookData | { endpointId: string };
}

/** The message telling `change` of a reservation of `licenseeId`, seen at `at`, as its `sequence`th change. */
export function reservationMessage(
  licenseeId: string,
  change: ReservationChange,
  sequence: number,
  at: Date,
): WebhookMessage {
  const { reservation } = change;
  const status = readOrNull(reservation, 'status');
  return {
    type: TYPE_OF_KIND[change.kind],
    timestamp: at.toISOString(),
    data: {
      eventId: reservation.eventId,
      reservationNumber: reservation.reservationNumber,
      id: encodeLicenseeGlobalId('Reservation', `${reservation.eventId}:${reservation.reservationNumber}`, licenseeId),
      status: status && (RESERVATION_STATUSES as readonly string[]).includes(status) ? status.toUpperCase() : null,
      modifiedAt: change.modifiedAt,
      sequence,
    },
  };
}

/** The test message `pingWebhookEndpoint` sends. */
export function testMessage(endpointId: string, at: Date): WebhookMessage {
  return { type: 'webhook.test', timestamp: at.toISOString(), data: { endpointId } };
}

/**
 * The `webhook-id` of `change` for `endpointId`: the same on every attempt and on every replica
 * that sees the change (the receiver's idempotency key), different per endpoint.
 */
export function messageId(endpointId: string, changeKey: string): string {
  return `msg_${createHash('sha256').update(`${endpointId}\u0000${changeKey}`).digest('base64url').slice(0, 27)}`;
}

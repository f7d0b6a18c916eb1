import type { CachedType } from '../../config/response-cache-ttls.ts';

/**
 * What each mutation may change, as the types of the cached answers to drop once it ran. Dropping
 * by type drops every answer holding one of them or an empty list of them, so a new custom field
 * appears in `customFields` at once; it also covers what a mutation changes without returning it
 * (a value set on a reservation the payload does not select, pickup that returns only a count).
 * A test checks that every mutation is listed here.
 */
export const CHANGED_BY_MUTATION: Readonly<Record<string, readonly CachedType[]>> = {
  // With updateReservation the attendee's reservations take the new contact details.
  upsertAttendee: ['Attendee', 'Reservation'],
  // An answer shows its question.
  saveEventQuestion: ['EventQuestion', 'AttendeeAnswer'],
  createCustomField: ['CustomField'],
  // The values are shown on the reservation or attendee they are set on.
  setCustomFieldValue: ['Reservation', 'Attendee'],
  recordActualizedPickup: ['RoomPickup'],
  // Webhook management changes the gateway's own state, whose queries are never cached.
  createWebhookEndpoint: [],
  updateWebhookEndpoint: [],
  deleteWebhookEndpoint: [],
  enableWebhookEndpoint: [],
  disableWebhookEndpoint: [],
  rotateWebhookSecret: [],
  pingWebhookEndpoint: [],
  redeliverWebhook: [],
  recoverWebhookEndpoint: [],
};

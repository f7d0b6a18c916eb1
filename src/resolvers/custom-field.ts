import { z } from 'zod';
import { BadInputError } from '../upstream/errors.ts';
import type { CustomFieldModel } from '../upstream/records.ts';
import type { GatewayContext } from './context.ts';
import { tellOwnWrite } from './reservation-change.ts';
import { asInput, validate } from './validate.ts';

/** The fields of one event, or without an event every field of every event. */
export function listCustomFields(ctx: GatewayContext, eventId?: number | null): Promise<CustomFieldModel[]> {
  return ctx.calls.read('getcustomfields', eventId == null ? {} : { eventId });
}

export async function getCustomField(ctx: GatewayContext, customFieldId: number): Promise<CustomFieldModel | null> {
  return (await listCustomFields(ctx)).find((f) => f.customFieldId === customFieldId) ?? null;
}

// Lengths are the endpoint table's rules (postcustomfield, postcustomfieldvalue).
const createSchema = z.object({
  name: z.string().trim().min(1, 'must not be empty'),
  eventId: z.number().int().min(1).nullish(),
});

/** Not idempotent upstream: each call creates a field, and an ambiguous failure is never repeated. */
export async function createCustomField(
  ctx: GatewayContext,
  input: { name: string; eventId?: number | null },
): Promise<CustomFieldModel> {
  const f = validate(createSchema, input, 'input');
  return asInput('input', () =>
    ctx.calls.send('postcustomfield', { name: f.name, ...(f.eventId == null ? {} : { eventId: f.eventId }) }),
  );
}

export interface SetCustomFieldValueInput {
  customFieldId: number;
  value: string;
  reservationNumber?: number | null;
  attendeeId?: string | null;
  registrationEventId?: string | null;
  eventId?: number | null;
}

const setSchema = z
  .object({
    customFieldId: z.number().int().min(1),
    value: z.string(),
    reservationNumber: z.number().int().min(1).nullish(),
    attendeeId: z.string().min(1, 'must not be empty').nullish(),
    registrationEventId: z.string().min(1, 'must not be empty').nullish(),
    eventId: z.number().int().min(1).nullish(),
  })
  .superRefine((v, ctx) => {
    const onAttendee = v.attendeeId != null || v.registrationEventId != null;
    if (v.reservationNumber != null && onAttendee) {
      ctx.addIssue({
        code: 'custom',
        path: ['reservationNumber'],
        message: 'give either reservationNumber, or attendeeId and registrationEventId, not both',
      });
    } else if (v.reservationNumber == null && !onAttendee) {
      ctx.addIssue({
        code: 'custom',
        path: ['reservationNumber'],
        message: 'give either reservationNumber, or attendeeId and registrationEventId',
      });
    } else if (onAttendee && v.attendeeId == null) {
      ctx.addIssue({ code: 'custom', path: ['attendeeId'], message: 'is required with registrationEventId' });
    } else if (onAttendee && v.registrationEventId == null) {
      ctx.addIssue({ code: 'custom', path: ['registrationEventId'], message: 'is required with attendeeId' });
    }
  });

export async function setCustomFieldValue(ctx: GatewayContext, input: SetCustomFieldValueInput) {
  const v = validate(setSchema, input, 'input');
  // Whatever the target (reservation or attendee), a given eventId is checked before the write.
  if (v.eventId != null) await checkFieldOfEvent(ctx, v.customFieldId, v.eventId);
  const params = {
    customFieldId: v.customFieldId,
    value: v.value,
    ...(v.reservationNumber != null
      ? { reservationId: v.reservationNumber }
      : { attendeeId: v.attendeeId!, registrationEventId: v.registrationEventId! }),
  };
  await asInput('input', () => ctx.calls.send('postcustomfieldvalue', params), { reservationId: 'reservationNumber' });
  // The reservation's (or the attendee's reservations') subscribers hear of the new value now.
  await tellOwnWrite(
    ctx,
    v.reservationNumber != null
      ? { reservationNumber: v.reservationNumber, eventId: v.eventId }
      : { attendeeId: v.attendeeId!, registrationEventId: v.registrationEventId! },
  );
  return v;
}

/**
 * A field restricted to one event takes no values on another event's reservations: the service
 * refuses that only after the write was sent, so the (cached) field list answers first. A field
 * not in the list is left for the service to judge (it may be newer than the cache).
 */
async function checkFieldOfEvent(ctx: GatewayContext, customFieldId: number, eventId: number): Promise<void> {
  const field = await getCustomField(ctx, customFieldId);
  if (field?.eventId != null && field.eventId !== eventId) {
    throw new BadInputError(
      `input.customFieldId: custom field ${customFieldId} is restricted to event ${field.eventId}, not event ${eventId}`,
      'input.customFieldId',
    );
  }
}

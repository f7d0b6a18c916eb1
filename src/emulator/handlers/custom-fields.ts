import { invalid, notFound, ServiceError } from '../params.ts';
import { type Route, V102 } from '../route.ts';
import { requireEvent } from './events.ts';

const formatField = (f: { customFieldId: number; name: string; eventId: number | null }) => ({
  customFieldId: f.customFieldId,
  name: f.name,
  eventId: f.eventId,
});

export const customFieldRoutes: Route[] = [
  {
    name: 'postcustomfield',
    versions: V102,
    params: { name: { type: 'string', required: true }, eventId: { type: 'int' } },
    handle(ctx) {
      const eventId = ctx.params.eventId === undefined ? null : requireEvent(ctx).eventId;
      return formatField(
        ctx.store.createCustomField(ctx.licensee.systemIdentifier, ctx.params.name as string, eventId),
      );
    },
  },
  {
    name: 'getcustomfields',
    versions: V102,
    // The service lists it as required, yet describes what a call without it answers: not an error.
    params: { eventId: { type: 'int' } },
    listName: 'customFields',
    handle(ctx) {
      const eventId = ctx.params.eventId === undefined ? undefined : requireEvent(ctx).eventId;
      return [...ctx.store.customFields.values()]
        .filter((f) => f.licensee === ctx.licensee.systemIdentifier && (eventId === undefined || f.eventId === eventId))
        .sort((a, b) => a.customFieldId - b.customFieldId)
        .map(formatField);
    },
  },
  {
    name: 'postcustomfieldvalue',
    versions: V102,
    params: {
      customFieldId: { type: 'int', required: true },
      value: { type: 'string', required: true, max: 1000 },
      reservationId: { type: 'int' },
      attendeeId: { type: 'string' },
      registrationEventId: { type: 'string' },
    },
    handle(ctx) {
      const p = ctx.params as {
        customFieldId: number;
        value: string;
        reservationId?: number;
        attendeeId?: string;
        registrationEventId?: string;
      };
      const onAttendee = p.attendeeId !== undefined || p.registrationEventId !== undefined;
      if (p.reservationId !== undefined && onAttendee) {
        throw invalid('reservationId', 'give either reservationId, or attendeeId and registrationEventId, not both');
      }
      if (p.reservationId === undefined) {
        if (!onAttendee)
          throw new ServiceError(
            400,
            'MISSING_PARAMETER',
            'reservationId, or attendeeId and registrationEventId, is required',
            'reservationId',
          );
        if (p.attendeeId === undefined)
          throw new ServiceError(
            400,
            'MISSING_PARAMETER',
            'attendeeId is required with registrationEventId',
            'attendeeId',
          );
        if (p.registrationEventId === undefined)
          throw new ServiceError(
            400,
            'MISSING_PARAMETER',
            'registrationEventId is required with attendeeId',
            'registrationEventId',
          );
      }
      const field = ctx.store.customFields.get(p.customFieldId);
      if (!field || field.licensee !== ctx.licensee.systemIdentifier) throw notFound('custom field', 'customFieldId');
      const restricted = () =>
        invalid('customFieldId', `custom field ${field.customFieldId} is restricted to event ${field.eventId}`);
      if (p.reservationId !== undefined) {
        const reservation = ctx.store.reservationOf(ctx.licensee.systemIdentifier, p.reservationId);
        if (!reservation) throw notFound('reservation', 'reservationId');
        if (field.eventId !== null && field.eventId !== reservation.eventId) throw restricted();
        ctx.store.customFieldValues.set(`${field.customFieldId}|r|${reservation.reservationNumber}`, p.value);
      } else {
        // An attendee already booked in other events only is not one of this field's event. One
        // that has not booked yet may still book there; its value shows only on that event's
        // reservations (format.ts).
        const events = ctx.store.eventsOfAttendee(ctx.licensee.systemIdentifier, p.attendeeId!, p.registrationEventId!);
        if (field.eventId !== null && events.size > 0 && !events.has(field.eventId)) throw restricted();
        ctx.store.customFieldValues.set(`${field.customFieldId}|a|${p.attendeeId}|${p.registrationEventId}`, p.value);
      }
      return { success: true };
    },
  },
];

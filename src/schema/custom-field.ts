import { idNumbers } from '../ids/local-id.ts';
import {
  createCustomField,
  getCustomField,
  listCustomFields,
  type SetCustomFieldValueInput as SetInput,
  setCustomFieldValue,
} from '../resolvers/custom-field.ts';
import { resolveCustomFieldReference } from '../resolvers/entities.ts';
import { getEvent } from '../resolvers/event.ts';
import { scoped } from '../resolvers/request-calls.ts';
import { getReservation } from '../resolvers/reservation.ts';
import { builder } from './builder.ts';
import { costs, costsNothing, customFieldList, oncePerEvent, oneWrite, reservationOfValue } from './cost.ts';
import { internalOnly } from './federation.ts';
import { AttendeeRef, CustomFieldRef, EventRef, isNode, ReservationRef, rawDescription } from './refs.ts';
import { needs } from './scopes.ts';
import { reservationFlags } from './selection.ts';

// Keyed by the service's own number: other subgraphs know it, our opaque ids they do not.
builder.asEntity(CustomFieldRef, {
  key: builder.selection<{ customFieldId: number }>('customFieldId'),
  resolveReference: (ref, ctx) => resolveCustomFieldReference(ctx, ref),
});

builder.node(CustomFieldRef, {
  description: 'A custom field for reservations and attendees; also a field of the licensee console’s advanced search.',
  id: { resolve: (f) => f.customFieldId, parse: (id) => idNumbers(id, 1)?.[0] ?? null },
  isTypeOf: isNode('CustomField'),
  loadOne: (customFieldId, ctx) => (customFieldId === null ? null : getCustomField(ctx, customFieldId)),
  fields: (t) => ({
    customFieldId: t.exposeInt('customFieldId', { description: 'The service’s identifier.', ...costsNothing }),
    name: t.exposeString('name', { nullable: true, description: 'Name of the field.', ...costsNothing }),
    eventId: t.exposeInt('eventId', {
      nullable: true,
      description: 'The event whose reservations it is restricted to; null for all events.',
      ...costsNothing,
    }),
    event: t.field({
      type: EventRef,
      nullable: true,
      description: 'That event.',
      ...costs(oncePerEvent),
      resolve: (f, _args, ctx, info) => (f.eventId == null ? null : getEvent(scoped(ctx, info), f.eventId)),
    }),
    raw: t.field({
      type: 'JSON',
      description: rawDescription,
      ...internalOnly,
      ...costsNothing,
      resolve: (f) => f.raw,
    }),
  }),
});

builder.queryField('customFields', (t) =>
  t.field({
    type: [CustomFieldRef],
    description: 'Custom fields of one event, or without eventId every field of every event.',
    args: { eventId: t.arg.int({ required: false, description: 'Only the fields restricted to this event.' }) },
    ...costs(customFieldList),
    ...needs('read'),
    resolve: (_root, args, ctx, info) => listCustomFields(scoped(ctx, info), args.eventId),
  }),
);

const CreateCustomFieldInput = builder.inputType('CreateCustomFieldInput', {
  description: 'A custom field to create.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Its name (at most 255 characters).' }),
    eventId: t.int({ description: 'Restricts the field to this event’s reservations.' }),
  }),
});

const CreateCustomFieldPayload = builder
  .objectRef<{ customField: Awaited<ReturnType<typeof createCustomField>> }>('CreateCustomFieldPayload')
  .implement({
    description: 'The custom field created.',
    fields: (t) => ({
      customField: t.field({
        type: CustomFieldRef,
        description: 'The new field.',
        ...costsNothing,
        resolve: (p) => p.customField,
      }),
    }),
  });

builder.mutationField('createCustomField', (t) =>
  t.field({
    type: CreateCustomFieldPayload,
    description:
      'Creates a custom field. Each call creates a new one, even with a name in use; after a failure ' +
      'whose outcome is unknown it is not repeated.',
    args: { input: t.arg({ type: CreateCustomFieldInput, required: true, description: 'The field.' }) },
    ...costs(oneWrite),
    ...needs('write'),
    resolve: async (_root, args, ctx) => ({ customField: await createCustomField(ctx, args.input) }),
  }),
);

const SetCustomFieldValueInput = builder.inputType('SetCustomFieldValueInput', {
  description: 'A value to register: on a reservation, or on an attendee (both attendeeId and registrationEventId).',
  fields: (t) => ({
    customFieldId: t.int({ required: true, description: 'The custom field.' }),
    value: t.string({ required: true, description: 'The value (at most 1000 characters).' }),
    reservationNumber: t.int({ description: 'The reservation; or give attendeeId and registrationEventId.' }),
    attendeeId: t.string({ description: 'The attendee (with registrationEventId).' }),
    registrationEventId: t.string({ description: 'The attendee’s registration event (with attendeeId).' }),
    eventId: t.int({
      description:
        'The reservation’s event, so the payload can return the reservation (the service looks ' +
        'reservations up within an event).',
    }),
  }),
});

const SetCustomFieldValuePayload = builder.objectRef<SetInput>('SetCustomFieldValuePayload').implement({
  description: 'The value registered.',
  fields: (t) => ({
    customFieldId: t.exposeInt('customFieldId', { description: 'The custom field.', ...costsNothing }),
    value: t.exposeString('value', { description: 'The value.', ...costsNothing }),
    reservation: t.field({
      type: ReservationRef,
      nullable: true,
      description:
        'The reservation, when the value was set on one and its event is known (from eventId or the ' +
        'field’s own event).',
      ...costs(reservationOfValue),
      resolve: async (v, _args, ctx, info) => {
        if (v.reservationNumber == null) return null;
        const at = scoped(ctx, info);
        const eventId =
          v.eventId ?? (await listCustomFields(at)).find((f) => f.customFieldId === v.customFieldId)?.eventId;
        return eventId == null ? null : getReservation(at, eventId, v.reservationNumber, reservationFlags(info, []));
      },
    }),
    attendee: t.field({
      type: AttendeeRef,
      nullable: true,
      description: 'The attendee, when the value was set on one.',
      ...costsNothing,
      resolve: (v) =>
        v.attendeeId && v.registrationEventId
          ? { attendeeId: v.attendeeId, registrationEventId: v.registrationEventId }
          : null,
    }),
  }),
});

builder.mutationField('setCustomFieldValue', (t) =>
  t.field({
    type: SetCustomFieldValuePayload,
    description: 'Registers a custom field’s value on a reservation or an attendee; setting it again replaces it.',
    args: {
      input: t.arg({ type: SetCustomFieldValueInput, required: true, description: 'The value and where it goes.' }),
    },
    ...costs(oneWrite),
    ...needs('write'),
    resolve: (_root, args, ctx) => setCustomFieldValue(ctx, args.input),
  }),
);

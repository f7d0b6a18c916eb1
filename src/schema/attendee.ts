import { idPart, idTextParts } from '../ids/local-id.ts';
import { upsertAttendee } from '../resolvers/attendee.ts';
import { resolveAttendeeReference } from '../resolvers/entities.ts';
import { scoped } from '../resolvers/request-calls.ts';
import { listAttendeeReservations } from '../resolvers/reservation.ts';
import { builder } from './builder.ts';
import { attendeeReservations, costs, costsNothing, oneWrite } from './cost.ts';
import { AttendeeRef, isNode, ReservationConnection, ReservationRef } from './refs.ts';
import { needs } from './scopes.ts';
import { reservationFlags } from './selection.ts';

// The service has no attendee read: a reference is resolved from its key alone, without a call.
builder.asEntity(AttendeeRef, {
  key: builder.selection<{ attendeeId: string; registrationEventId: string }>('attendeeId registrationEventId'),
  resolveReference: (ref) => resolveAttendeeReference(ref),
});

builder.node(AttendeeRef, {
  description: 'An attendee as the registration system knows them: identified by its attendee id and its event id.',
  id: {
    resolve: (a) => `${idPart(a.attendeeId)}:${idPart(a.registrationEventId)}`,
    parse: (id) => {
      const [attendeeId, registrationEventId] = idTextParts(id, 2) ?? [];
      return attendeeId === undefined || registrationEventId === undefined ? null : { attendeeId, registrationEventId };
    },
  },
  isTypeOf: isNode('Attendee'),
  // The service has no attendee read: the id is the attendee's whole identity, answered without a call.
  loadOne: (key) => key,
  fields: (t) => ({
    attendeeId: t.exposeString('attendeeId', {
      description: 'The registration system’s attendee id.',
      ...costsNothing,
    }),
    registrationEventId: t.exposeString('registrationEventId', {
      description: 'The registration system’s event id (not the service’s eventId).',
      ...costsNothing,
    }),
    reservations: t.connection(
      {
        type: ReservationRef,
        description:
          'Reservations of one event linked to this attendee: upstream filters by attendeeId, and ' +
          'the gateway keeps those of this attendee’s registrationEventId (an attendee’s ' +
          'reservations are few, so totalCount is exact).',
        args: { eventId: t.arg.int({ required: true, description: 'The service’s event to look in.' }) },
        ...costs(attendeeReservations),
        resolve: (a, args, ctx, info) =>
          listAttendeeReservations(
            scoped(ctx, info),
            a,
            args.eventId,
            reservationFlags(info, ['edges', 'node']),
            args,
          ) as never,
      },
      ReservationConnection,
    ),
  }),
});

const UpsertAttendeeInput = builder.inputType('UpsertAttendeeInput', {
  description: 'An attendee’s contact record, pushed before the attendee books so the reservation form is pre-filled.',
  fields: (t) => ({
    attendeeId: t.string({ required: true, description: 'The registration system’s attendee id.' }),
    registrationEventId: t.string({ required: true, description: 'The registration system’s event id.' }),
    updateReservation: t.boolean({
      defaultValue: false,
      description: 'On update, also push the data to the linked reservation, if any.',
    }),
    email: t.string({ description: 'Contact email.' }),
    ccEmails: t.stringList({ description: 'Emails that receive the credit-card confirmation.' }),
    salutation: t.string({ description: 'Salutation.' }),
    firstName: t.string({ description: 'First name.' }),
    lastName: t.string({ description: 'Last name.' }),
    companyName: t.string({ description: 'Company.' }),
    address: t.string({ description: 'First address line.' }),
    address2: t.string({ description: 'Second address line.' }),
    city: t.string({ description: 'City.' }),
    state: t.string({ description: 'State or province.' }),
    zip: t.string({ description: 'Zip or postal code.' }),
    country: t.string({ description: 'Full English name, ISO 3166 alpha-2 or alpha-3 code.' }),
    phone: t.string({ description: 'Phone.' }),
  }),
});

const UpsertAttendeePayload = builder
  .objectRef<Awaited<ReturnType<typeof upsertAttendee>>>('UpsertAttendeePayload')
  .implement({
    description: 'The attendee written.',
    fields: (t) => ({
      attendee: t.field({
        type: AttendeeRef,
        description: 'The attendee.',
        ...costsNothing,
        resolve: (p) => p.attendee,
      }),
      created: t.exposeBoolean('created', {
        nullable: true,
        description: 'True when a new record was made, false when an existing one was updated.',
        ...costsNothing,
      }),
    }),
  });

builder.mutationField('upsertAttendee', (t) =>
  t.field({
    type: UpsertAttendeePayload,
    description:
      'Creates or updates the attendee identified by attendeeId and registrationEventId, to pre-fill ' +
      'the reservation form. The service removes attendee data 90 days after the attached event ' +
      'ended or the record was last updated.',
    args: { input: t.arg({ type: UpsertAttendeeInput, required: true, description: 'The attendee.' }) },
    ...costs(oneWrite),
    ...needs('write'),
    resolve: (_root, args, ctx) => upsertAttendee(ctx, args.input),
  }),
);

import { idNumbers } from '../ids/local-id.ts';
import { getCustomField } from '../resolvers/custom-field.ts';
import { resolveReservationReference } from '../resolvers/entities.ts';
import { getEvent } from '../resolvers/event.ts';
import type { ReservationFilter as ReservationFilterShape } from '../resolvers/filters.ts';
import { scoped } from '../resolvers/request-calls.ts';
import { getReservation } from '../resolvers/reservation.ts';
import { UpstreamResponseError } from '../upstream/errors.ts';
import type { HotelModel, ReservationModel } from '../upstream/records.ts';
import { RESERVATION_STATUSES, ROOM_STATUSES } from '../upstream/vocabulary.ts';
import { builder } from './builder.ts';
import { costs, costsNothing, everyCustomField, hotelOfReservation, oncePerEvent } from './cost.ts';
import { known, ReservationStatus, RoomStatus } from './enums.ts';
import { internalOnly } from './federation.ts';
import { hotelOf } from './hotel.ts';
import type { SameShape } from './input-shape.ts';
import { AttendeeRef, CustomFieldRef, EventRef, HotelRef, isNode, ReservationRef, rawDescription } from './refs.ts';
import { ALL_FLAGS, hotelFromRecord, reservationFlags } from './selection.ts';

type Room = ReservationModel['rooms'][number];
type Contact = NonNullable<ReservationModel['contact']>;
type Rate = Room['nightlyRates'][number];
type FieldValue = NonNullable<ReservationModel['customFields']>[number];

export const ReservationFilter = builder.inputType('ReservationFilter', {
  description: 'Criteria for reservations; all given ones must match. Text criteria match whole values, in any case.',
  fields: (t) => ({
    reservationNumber: t.int({ description: 'Exactly this reservation.' }),
    hotelId: t.int({ description: 'Reservations at this hotel.' }),
    contactEmail: t.string({ description: 'Email of the reservation’s contact.' }),
    contactLastName: t.string({ description: 'Last name of the reservation’s contact.' }),
    guestLastName: t.string({ description: 'Last name of any guest of any room.' }),
    confirmationNumber: t.string({ description: 'The number the hotel assigned.' }),
    groupCode: t.string({ description: 'Code of the sub-block.' }),
    reservationStatus: t.field({ type: ReservationStatus, description: 'State of the reservation.' }),
    roomStatus: t.field({ type: RoomStatus, description: 'Reservations with at least one room in this state.' }),
    companyName: t.string({ description: 'Company of the contact.' }),
    label1: t.string({ description: 'First label.' }),
    label2: t.string({ description: 'Second label.' }),
    attendeeId: t.string({ description: 'Reservations linked to this attendee (the registration system’s id).' }),
    modifiedAfter: t.field({
      type: 'DateTime',
      description:
        'Reservations modified at or after this instant. The service compares whole minutes, so the ' +
        'minute it falls in is included.',
    }),
  }),
});
true satisfies SameShape<typeof ReservationFilter.$inferInput, ReservationFilterShape>;

export const NightlyRate = builder.objectRef<Rate>('NightlyRate').implement({
  description: 'The rate of one night.',
  fields: (t) => ({
    date: t.field({
      type: 'Date',
      nullable: true,
      description: 'The night.',
      ...costsNothing,
      resolve: (r) => r.date ?? null,
    }),
    amount: t.exposeFloat('amount', { nullable: true, description: 'The rate.', ...costsNothing }),
    currency: t.exposeString('currency', { nullable: true, description: 'ISO 4217 currency code.', ...costsNothing }),
  }),
});

const Guest = builder.objectRef<{ firstName?: string | null; lastName?: string | null }>('Guest').implement({
  description: 'A guest staying in a room.',
  fields: (t) => ({
    firstName: t.exposeString('firstName', { nullable: true, description: 'First name.', ...costsNothing }),
    lastName: t.exposeString('lastName', { nullable: true, description: 'Last name.', ...costsNothing }),
  }),
});

const ReservationRoom = builder.objectRef<Room>('ReservationRoom').implement({
  description: 'A room of a reservation.',
  fields: (t) => ({
    roomId: t.exposeInt('roomId', {
      nullable: true,
      description: 'Identifier of the room in the reservation.',
      ...costsNothing,
    }),
    roomTypeId: t.exposeInt('roomTypeId', {
      nullable: true,
      description: 'Identifier of the room type.',
      ...costsNothing,
    }),
    roomType: t.exposeString('roomType', { nullable: true, description: 'Name of the room type.', ...costsNothing }),
    status: t.field({
      type: RoomStatus,
      nullable: true,
      description: 'State of the room.',
      ...costsNothing,
      resolve: (r) => known(ROOM_STATUSES, r.status),
    }),
    arrivalDate: t.field({
      type: 'Date',
      nullable: true,
      description: 'Arrival.',
      ...costsNothing,
      resolve: (r) => r.arrivalDate ?? null,
    }),
    departureDate: t.field({
      type: 'Date',
      nullable: true,
      description: 'Departure.',
      ...costsNothing,
      resolve: (r) => r.departureDate ?? null,
    }),
    occupancy: t.exposeInt('occupancy', { nullable: true, description: 'Number of guests.', ...costsNothing }),
    guests: t.field({
      type: [Guest],
      description: 'Guests of the room.',
      ...costsNothing,
      resolve: (r) => listOf(() => r.guests),
    }),
    nightlyRates: t.field({
      type: [NightlyRate],
      description: 'Rate of each night.',
      ...costsNothing,
      resolve: (r) => listOf(() => r.nightlyRates),
    }),
  }),
});

/**
 * A list the schema declares non-null: an error there would blank the whole page (every field above
 * it is non-null up to the connection), so a value the service sent that is not a list reads as none.
 */
function listOf<T>(read: () => T[] | null | undefined): T[] {
  try {
    return read() ?? [];
  } catch (error) {
    if (error instanceof UpstreamResponseError) return [];
    throw error;
  }
}

/** A contact detail: optional, and sent with the reservation (its flag is asked only when selected). */
const contactField = (description: string) => ({ nullable: true as const, description, ...costsNothing });

const ReservationContact = builder.objectRef<Contact>('ReservationContact').implement({
  description:
    'Who made the reservation. Address, company and preferred guest number are asked of the service ' +
    'only when selected.',
  fields: (t) => ({
    firstName: t.exposeString('firstName', contactField('First name.')),
    lastName: t.exposeString('lastName', contactField('Last name.')),
    email: t.exposeString('email', contactField('Email.')),
    phone: t.exposeString('phone', contactField('Phone.')),
    address: t.exposeString('address', contactField('First address line.')),
    address2: t.exposeString('address2', contactField('Second address line.')),
    city: t.exposeString('city', contactField('City.')),
    state: t.exposeString('state', contactField('State or province.')),
    zip: t.exposeString('zip', contactField('Zip or postal code.')),
    country: t.exposeString('country', contactField('Country.')),
    companyName: t.exposeString('companyName', contactField('Company.')),
    preferredGuestNumber: t.exposeString(
      'preferredGuestNumber',
      contactField('The hotel chain’s preferred guest number.'),
    ),
  }),
});

type SubBlockShape = { subBlockId: number; groupCode?: string | null; name?: string | null };

const SubBlock = builder.objectRef<SubBlockShape>('SubBlock').implement({
  description: 'The sub-block of a group code.',
  fields: (t) => ({
    subBlockId: t.exposeInt('subBlockId', { description: 'Identifier of the sub-block.', ...costsNothing }),
    groupCode: t.exposeString('groupCode', { nullable: true, description: 'Its group code.', ...costsNothing }),
    name: t.exposeString('name', { nullable: true, description: 'Its name.', ...costsNothing }),
  }),
});

const CustomFieldValue = builder.objectRef<FieldValue>('CustomFieldValue').implement({
  description: 'A value registered for a custom field.',
  fields: (t) => ({
    customField: t.field({
      type: CustomFieldRef,
      nullable: true,
      description: 'The custom field.',
      ...costs(everyCustomField),
      resolve: (v, _args, ctx, info) => getCustomField(scoped(ctx, info), v.customFieldId),
    }),
    customFieldId: t.exposeInt('customFieldId', { description: 'Identifier of the custom field.', ...costsNothing }),
    name: t.exposeString('name', { nullable: true, description: 'Name of the custom field.', ...costsNothing }),
    value: t.exposeString('value', { nullable: true, description: 'The value.', ...costsNothing }),
  }),
});

// Other subgraphs know a reservation by its event and number: the service looks numbers up within an event.
builder.asEntity(ReservationRef, {
  key: builder.selection<{ eventId: number; reservationNumber: number }>('eventId reservationNumber'),
  resolveReference: (ref, ctx, info) => resolveReservationReference(ctx, ref, reservationFlags(info, [])),
});

builder.node(ReservationRef, {
  description: 'A reservation of rooms at a hotel of an event.',
  id: { resolve: (r) => `${r.eventId}:${r.reservationNumber}`, parse: (id) => idNumbers(id, 2) },
  isTypeOf: isNode('Reservation'),
  loadOne: (numbers, ctx) => {
    const [eventId, reservationNumber] = numbers ?? [];
    return eventId === undefined || reservationNumber === undefined
      ? null
      : getReservation(ctx, eventId, reservationNumber, ALL_FLAGS);
  },
  fields: (t) => ({
    reservationNumber: t.exposeInt('reservationNumber', { description: 'The reservation number.', ...costsNothing }),
    eventId: t.exposeInt('eventId', {
      description: 'The event (reservation numbers are looked up within an event upstream).',
      ...costsNothing,
    }),
    event: t.field({
      type: EventRef,
      nullable: true,
      description: 'The event.',
      ...costs(oncePerEvent),
      resolve: (r, _args, ctx, info) => getEvent(scoped(ctx, info), r.eventId),
    }),
    status: t.field({
      type: ReservationStatus,
      nullable: true,
      description: 'State of the reservation.',
      ...costsNothing,
      resolve: (r) => known(RESERVATION_STATUSES, r.status),
    }),
    hotel: t.field({
      type: HotelRef,
      nullable: true,
      description: 'The hotel.',
      ...costs(hotelOfReservation),
      // The reservation names its hotel: the event's hotel list is read only for more than that.
      resolve: (r, _args, ctx, info) =>
        r.hotelId != null && r.hotelName != null && hotelFromRecord.atResolver(info)
          ? ({ eventId: r.eventId, hotelId: r.hotelId, name: r.hotelName } as HotelModel)
          : hotelOf(ctx, info, r.eventId, r.hotelId),
    }),
    confirmationNumber: t.exposeString('confirmationNumber', {
      nullable: true,
      description: 'The number the hotel assigned.',
      ...costsNothing,
    }),
    groupCode: t.exposeString('groupCode', {
      nullable: true,
      description: 'Code of the sub-block it was booked in.',
      ...costsNothing,
    }),
    subBlock: t.field({
      type: SubBlock,
      nullable: true,
      description: 'The sub-block it was booked in.',
      ...costsNothing,
      resolve: (r) => (r.subBlock?.subBlockId == null ? null : (r.subBlock as SubBlockShape)),
    }),
    attendeeId: t.exposeString('attendeeId', {
      nullable: true,
      description: 'The linked attendee (the registration system’s id).',
      ...costsNothing,
    }),
    registrationEventId: t.exposeString('registrationEventId', {
      nullable: true,
      description: 'The registration system’s event id of the linked attendee.',
      ...costsNothing,
    }),
    attendee: t.field({
      type: AttendeeRef,
      nullable: true,
      description: 'The linked attendee; null unless both attendeeId and registrationEventId are known.',
      ...costsNothing,
      resolve: (r) =>
        r.attendeeId && r.registrationEventId
          ? { attendeeId: r.attendeeId, registrationEventId: r.registrationEventId }
          : null,
    }),
    arrivalDate: t.field({
      type: 'Date',
      nullable: true,
      description: 'Arrival.',
      ...costsNothing,
      resolve: (r) => r.arrivalDate ?? null,
    }),
    departureDate: t.field({
      type: 'Date',
      nullable: true,
      description: 'Departure.',
      ...costsNothing,
      resolve: (r) => r.departureDate ?? null,
    }),
    createdAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it was made.',
      ...costsNothing,
      resolve: (r) => r.createdDate ?? null,
    }),
    modifiedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it last changed.',
      ...costsNothing,
      resolve: (r) => r.modifiedDate ?? null,
    }),
    label1: t.exposeString('label1', { nullable: true, description: 'First label.', ...costsNothing }),
    label2: t.exposeString('label2', { nullable: true, description: 'Second label.', ...costsNothing }),
    contact: t.field({
      type: ReservationContact,
      nullable: true,
      description: 'Who made it.',
      ...costsNothing,
      resolve: (r) => r.contact ?? null,
    }),
    rooms: t.field({
      type: [ReservationRoom],
      description: 'Its rooms.',
      ...costsNothing,
      resolve: (r) => listOf(() => r.rooms),
    }),
    customFieldValues: t.field({
      type: [CustomFieldValue],
      description: 'Values of custom fields registered for it (asked of the service only when selected).',
      ...costsNothing,
      resolve: (r) => listOf(() => r.customFields),
    }),
    raw: t.field({
      type: 'JSON',
      description: rawDescription,
      ...internalOnly,
      ...costsNothing,
      resolve: (r) => r.raw,
    }),
  }),
});

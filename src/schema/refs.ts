import type {
  AnswerModel,
  AttendeeModel,
  CustomFieldModel,
  EventModel,
  GroupCodeModel,
  HotelModel,
  PickupModel,
  QuestionModel,
  ReservationModel,
  ShoppingViewHotelModel,
} from '../upstream/records.ts';
import { builder } from './builder.ts';

/** Refs of the types that domain files point at one another, declared once to avoid import cycles. */
export const EventRef = builder.objectRef<EventModel>('Event');
export const HotelRef = builder.objectRef<HotelModel>('Hotel');
export const ReservationRef = builder.objectRef<ReservationModel>('Reservation');
export const AttendeeRef = builder.objectRef<AttendeeModel>('Attendee');
export const EventQuestionRef = builder.objectRef<QuestionModel>('EventQuestion');
export const AttendeeAnswerRef = builder.objectRef<AnswerModel>('AttendeeAnswer');
export const CustomFieldRef = builder.objectRef<CustomFieldModel>('CustomField');
export const GroupCodeRef = builder.objectRef<GroupCodeModel>('GroupCode');
export const RoomPickupRef = builder.objectRef<PickupModel>('RoomPickup');
export const ShoppingViewHotelRef = builder.objectRef<ShoppingViewHotelModel>('ShoppingViewHotel');

export const ReservationConnection = builder.connectionObject(
  {
    type: ReservationRef,
    name: 'ReservationConnection',
    description: 'A window of reservations over the service’s pages of 1000.',
  },
  { name: 'ReservationEdge', description: 'A reservation and its cursor.' },
);

export const AttendeeAnswerConnection = builder.connectionObject(
  {
    type: AttendeeAnswerRef,
    name: 'AttendeeAnswerConnection',
    description: 'A window of attendee answers over the service’s pages of 1000.',
  },
  { name: 'AttendeeAnswerEdge', description: 'An answer and its cursor.' },
);

/** The raw record field every record type carries. */
export const rawDescription =
  'The record exactly as the service sent it, unknown properties included; its content depends on ' +
  'the detail flags the gateway had to send.';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object';
}

/**
 * The Node type of a record, told by the key only it carries (in this order: a reservation has an
 * attendeeId and a hotelId, a group code a hotelId, a question and a hotel an eventId). `node` and
 * `nodes` need it: loaded records are shared cache objects, not branded with their type.
 */
const NODE_KEYS = [
  ['reservationNumber', 'Reservation'],
  ['groupCode', 'GroupCode'],
  ['questionId', 'EventQuestion'],
  ['customFieldId', 'CustomField'],
  ['hotelId', 'Hotel'],
  ['registrationEventId', 'Attendee'],
  ['eventId', 'Event'],
] as const;

export function nodeTypename(value: unknown): string | undefined {
  return isRecord(value) ? NODE_KEYS.find(([key]) => key in value)?.[1] : undefined;
}

/** `isTypeOf` of the Node type `typename`. */
export const isNode = (typename: (typeof NODE_KEYS)[number][1]) => (value: unknown) => nodeTypename(value) === typename;

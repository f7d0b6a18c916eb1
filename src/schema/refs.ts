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
} from '../resolvers/models.ts';
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
  { type: ReservationRef, name: 'ReservationConnection', description: 'A window of reservations over the service’s pages of 1000.' },
  { name: 'ReservationEdge', description: 'A reservation and its cursor.' },
);

export const AttendeeAnswerConnection = builder.connectionObject(
  { type: AttendeeAnswerRef, name: 'AttendeeAnswerConnection', description: 'A window of attendee answers over the service’s pages of 1000.' },
  { name: 'AttendeeAnswerEdge', description: 'An answer and its cursor.' },
);

/** The raw record field every record type carries. */
export const rawDescription = 'The record exactly as the service sent it, unknown properties included; its content depends on the detail flags the gateway had to send.';

/**
 * An opaque, stable id for records that are not Relay nodes. It names the licensee like a global
 * id does (global-id.ts): two licensees both have default question 1, and a client caching by id
 * across licensees must not take one's for the other's.
 */
export function opaqueId(licenseeId: string, type: string, ...parts: (string | number)[]): string {
  return Buffer.from(`${type}:${parts.join(':')}@${licenseeId}`).toString('base64url');
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object';
}

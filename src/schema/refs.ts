/// <reference lib="es2024.string" />
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

/**
 * A UTF-16 surrogate without its other half. Text holding one is not well-formed: it has no UTF-8
 * form, and `encodeURIComponent` throws on it. Clients cannot send one (operations/well-formed-text.ts),
 * but a record of the service may hold one.
 */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** The same, captured: `split` keeps each one between the well-formed pieces around it. */
const LONE_SURROGATE_PIECE = new RegExp(`(${LONE_SURROGATE.source})`);
/** A lone surrogate's escape in an id: the bytes of its generalized UTF-8 (WTF-8) form, ED A0–BF 80–BF. */
const ESCAPED_SURROGATE = /%ED%([AB][0-9A-F])%([89AB][0-9A-F])/gi;

const hexByte = (byte: number) => `%${byte.toString(16).toUpperCase()}`;

/** `%ED%A0%BD` for U+D83D. */
function escapedSurrogate(surrogate: string): string {
  const unit = surrogate.charCodeAt(0);
  return `%ED${hexByte(0x80 | ((unit >> 6) & 0x3f))}${hexByte(0x80 | (unit & 0x3f))}`;
}

/** U+D83D for `%ED%A0%BD` (a `replace` callback of ESCAPED_SURROGATE). */
const surrogateOf = (_escape: string, second: string, third: string) =>
  String.fromCharCode(0xd000 | ((Number.parseInt(second, 16) & 0x3f) << 6) | (Number.parseInt(third, 16) & 0x3f));

/**
 * A text part of a local id (a group code, an attendee id): escaped so `:` and `@` stay separators.
 * Ids are stable public names, so well-formed text is escaped as it always was; a lone surrogate,
 * which `encodeURIComponent` throws on, as its WTF-8 bytes (which no well-formed text escapes to).
 */
export function idPart(text: string): string {
  if (text.isWellFormed()) return encodeURIComponent(text);
  return text
    .split(LONE_SURROGATE_PIECE)
    .map((piece, i) => (i % 2 === 0 ? encodeURIComponent(piece) : escapedSurrogate(piece)))
    .join('');
}

/** The text parts of a local id, or null when it has not `count` of them, non-empty. */
export function idTextParts(localId: string, count: number): string[] | null {
  const parts = localId.split(':');
  if (parts.length !== count) return null;
  try {
    // A lone surrogate's escape first: decodeURIComponent throws on it.
    const texts = parts.map((part) => decodeURIComponent(part.replace(ESCAPED_SURROGATE, surrogateOf)));
    return texts.every((text) => text.trim() !== '') ? texts : null;
  } catch {
    return null; // a malformed escape names nothing
  }
}

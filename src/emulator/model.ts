import type { Day } from './dates.ts';

/** The emulator's records. Dates are kept as numbers (Day or epoch ms) and formatted on the way out. */

/** The service's statuses (upstream contract), as records hold them and filters name them. */
export const RESERVATION_STATUSES = ['new', 'accepted', 'cancelled', 'declined'] as const;
export type ReservationStatus = (typeof RESERVATION_STATUSES)[number];
export const ROOM_STATUSES = ['active', 'cancelled'] as const;
export type RoomStatus = (typeof ROOM_STATUSES)[number];
export const HOTEL_STATUSES = ['enabled', 'disabled'] as const;
export type HotelStatus = (typeof HOTEL_STATUSES)[number];

/** A new or accepted reservation holds its active rooms: they count as picked up from the block. */
export const holdsRooms = (status: ReservationStatus) => status === 'new' || status === 'accepted';

export interface Licensee {
  systemIdentifier: string;
  key: string;
  /** IANA zone of the licensee's wall-clock timestamps. */
  timeZone: string;
}

export interface EventRecord {
  eventId: number;
  licensee: string;
  name: string;
  city: string;
  state: string;
  address: string;
  zip: string;
  /** Zone whose offset the event's ISO dates carry. */
  zone: string;
  startMs: number;
  endMs: number;
  cutOffMs: number;
}

export interface RoomTypeRecord {
  roomTypeId: number;
  roomType: string;
  baseRate: number;
  currency: string;
}

export interface HotelRecord {
  hotelId: number;
  eventId: number;
  name: string;
  address: string;
  city: string;
  state: string;
  zip: string;
  country: string;
  phone: string;
  status: HotelStatus;
  starRating: number;
  distanceMiles: number;
  partnerHotelId: string;
  /** The hotel's "Show Hotel Under Shopping View" setting. */
  shoppingView: boolean;
  description: string;
  cutOffMs: number;
  roomTypes: RoomTypeRecord[];
}

export interface GroupCodeRecord {
  eventId: number;
  groupCode: string;
  name: string;
  hotelId: number;
  subBlockId: number;
  startDay: Day;
  endDay: Day;
  rooms: number;
}

export interface Contact {
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  address: string;
  address2: string;
  city: string;
  state: string;
  zip: string;
  country: string;
  companyName: string;
  preferredGuestNumber: string;
}

export interface RoomRecord {
  roomId: number;
  roomTypeId: number;
  roomType: string;
  status: RoomStatus;
  arrivalDay: Day;
  departureDay: Day;
  occupancy: number;
  guests: { firstName: string; lastName: string }[];
  nightlyRates: { day: Day; amount: number; currency: string }[];
}

export interface ReservationRecord {
  reservationNumber: number;
  eventId: number;
  status: ReservationStatus;
  hotelId: number;
  confirmationNumber: string | null;
  groupCode: string | null;
  subBlockId: number | null;
  attendeeId: string | null;
  registrationEventId: string | null;
  arrivalDay: Day;
  departureDay: Day;
  createdMs: number;
  modifiedMs: number;
  label1: string | null;
  label2: string | null;
  contact: Contact;
  rooms: RoomRecord[];
}

export interface QuestionRecord {
  licensee: string;
  eventId: number;
  questionId: number;
  question: string;
  type: 1 | 2;
  /** [value, label] in the order given: an object would put integer-like values first. */
  options: [value: string, label: string][] | null;
  enabled: boolean;
}

export interface AnswerRecord {
  eventId: number;
  reservationNumber: number;
  questionId: number;
  answer: string;
  answeredMs: number;
}

export interface CustomFieldRecord {
  licensee: string;
  customFieldId: number;
  name: string;
  eventId: number | null;
}

export interface AttendeeRecord {
  licensee: string;
  attendeeId: string;
  registrationEventId: string;
  fields: Record<string, string>;
  updatedMs: number;
}

export interface DemoData {
  seed: number;
  startMs: number;
  licensees: Licensee[];
  events: EventRecord[];
  hotels: HotelRecord[];
  groupCodes: GroupCodeRecord[];
  /** Main-block rooms per hotel, room type and night: `${hotelId}:${roomTypeId}:${day}`. */
  blocks: Record<string, number>;
  reservations: ReservationRecord[];
  questions: QuestionRecord[];
  answers: AnswerRecord[];
  customFields: CustomFieldRecord[];
  customFieldValues: { customFieldId: number; reservationNumber: number; value: string }[];
  attendees: AttendeeRecord[];
}

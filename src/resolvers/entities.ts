import DataLoader from 'dataloader';
import { recordsOf } from '../connections/paged-source.ts';
import { idNumbers } from '../ids/local-id.ts';
import { stableKey } from '../upstream/cache.ts';
import { BadInputError } from '../upstream/errors.ts';
import type {
  AttendeeModel,
  CustomFieldModel,
  EventModel,
  HotelModel,
  QuestionModel,
  ReservationModel,
} from '../upstream/records.ts';
import type { GatewayContext } from './context.ts';
import { getCustomField } from './custom-field.ts';
import { getEvent } from './event.ts';
import { getHotel } from './hotel.ts';
import { getQuestion } from './question.ts';
import { orNull } from './request-calls.ts';
import { getReservation, type ReservationFlags, reservationSource } from './reservation.ts';

/**
 * References from other subgraphs (`_entities`) resolved through the request's calls (resolvers/request-calls.ts), so a
 * reference costs what the same lookup costs in a plain query: all hotels of an event share one
 * gethotels, all references to one event one getevent. A reference to nothing is null.
 */

type Reference = Record<string, unknown>;

/**
 * A key field as a service identifier. Another subgraph's mistake (a missing or non-numeric key) is
 * refused with the field named; a number the service cannot hold names nothing (null).
 */
function keyNumber(ref: Reference, type: string, field: string, where = 'representations'): number | null {
  const value = ref[field];
  const text = typeof value === 'number' || typeof value === 'string' ? String(value) : '';
  if (!/^-?\d+$/.test(text)) {
    throw new BadInputError(
      `${where}: a ${type} reference needs ${field} as an integer, got ${JSON.stringify(value) ?? 'nothing'}`,
      'representations',
    );
  }
  return idNumbers(text, 1)?.[0] ?? null;
}

function keyText(ref: Reference, type: string, field: string, where = 'representations'): string {
  const value = ref[field];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new BadInputError(
      `${where}: a ${type} reference needs ${field} as a non-empty string, got ${JSON.stringify(value) ?? 'nothing'}`,
      'representations',
    );
  }
  return value;
}

/** The key fields of each entity type, as the schema's `@key`s name them. */
const KEYS: Record<string, [field: string, kind: 'number' | 'text'][]> = {
  Event: [['eventId', 'number']],
  Hotel: [
    ['eventId', 'number'],
    ['hotelId', 'number'],
  ],
  Reservation: [
    ['eventId', 'number'],
    ['reservationNumber', 'number'],
  ],
  Attendee: [
    ['attendeeId', 'text'],
    ['registrationEventId', 'text'],
  ],
  EventQuestion: [
    ['eventId', 'number'],
    ['questionId', 'number'],
  ],
  CustomField: [['customFieldId', 'number']],
};

/**
 * Checks every reference before any is resolved: one malformed reference fails the whole
 * `_entities` with its position and field named, and no reference's call is sent first.
 */
export function checkRepresentations(representations: readonly unknown[]): void {
  representations.forEach((ref, i) => {
    const where = `representations[${i}]`;
    const type = ref !== null && typeof ref === 'object' ? (ref as Reference).__typename : undefined;
    // Own keys only: a __typename such as "constructor" or "__proto__" must not reach Object.prototype.
    const fields = typeof type === 'string' && Object.hasOwn(KEYS, type) ? KEYS[type] : undefined;
    if (!fields)
      throw new BadInputError(
        `${where}: __typename ${JSON.stringify(type) ?? 'is missing'}: not an entity of this subgraph`,
        'representations',
      );
    for (const [field, kind] of fields)
      (kind === 'number' ? keyNumber : keyText)(ref as Reference, type as string, field, where);
  });
}

export function resolveEventReference(ctx: GatewayContext, ref: Reference): Promise<EventModel | null> | null {
  const eventId = keyNumber(ref, 'Event', 'eventId');
  return eventId === null ? null : getEvent(ctx, eventId);
}

export function resolveHotelReference(
  ctx: GatewayContext,
  ref: Reference,
  partnerview: boolean,
): Promise<HotelModel | null> | null {
  const eventId = keyNumber(ref, 'Hotel', 'eventId');
  const hotelId = keyNumber(ref, 'Hotel', 'hotelId');
  return eventId === null || hotelId === null ? null : getHotel(ctx, eventId, hotelId, partnerview);
}

/** The service has no attendee read: the key is the attendee's whole identity here. */
export function resolveAttendeeReference(ref: Reference): AttendeeModel {
  return {
    attendeeId: keyText(ref, 'Attendee', 'attendeeId'),
    registrationEventId: keyText(ref, 'Attendee', 'registrationEventId'),
  };
}

export function resolveQuestionReference(ctx: GatewayContext, ref: Reference): Promise<QuestionModel | null> | null {
  const eventId = keyNumber(ref, 'EventQuestion', 'eventId');
  const questionId = keyNumber(ref, 'EventQuestion', 'questionId');
  return eventId === null || questionId === null ? null : orNull(getQuestion(ctx, eventId, questionId));
}

export function resolveCustomFieldReference(
  ctx: GatewayContext,
  ref: Reference,
): Promise<CustomFieldModel | null> | null {
  const customFieldId = keyNumber(ref, 'CustomField', 'customFieldId');
  return customFieldId === null ? null : getCustomField(ctx, customFieldId);
}

/**
 * Up to this many references to one event's reservations are looked up one by one. Past it the
 * event's page count is asked first, and its pages are read when they are fewer than the
 * references: at most one call more than a lookup each, and far fewer for many references.
 */
export const RESERVATION_LOOKUPS_MAX = 3;

interface ReservationKey {
  eventId: number;
  reservationNumber: number;
}

/** Per operation and detail flags: the references of one `_entities` arrive together and are batched. */
function reservationLoader(ctx: GatewayContext, flags: ReservationFlags) {
  return ctx.calls.loader(
    `reservation references|${stableKey(flags)}`,
    () =>
      new DataLoader<ReservationKey, ReservationModel | null, string>((keys) => loadReservations(ctx, flags, keys), {
        cacheKeyFn: (k) => `${k.eventId}:${k.reservationNumber}`,
      }),
  );
}

async function loadReservations(
  ctx: GatewayContext,
  flags: ReservationFlags,
  keys: readonly ReservationKey[],
): Promise<(ReservationModel | null)[]> {
  const numbersByEvent = new Map<number, number[]>();
  for (const k of keys) numbersByEvent.set(k.eventId, [...(numbersByEvent.get(k.eventId) ?? []), k.reservationNumber]);
  const found = new Map<string, ReservationModel | null>();
  await Promise.all(
    [...numbersByEvent].map(async ([eventId, numbers]) => {
      const records = await reservationsOfEvent(ctx, eventId, numbers, flags);
      numbers.forEach((n, i) => found.set(`${eventId}:${n}`, records[i] ?? null));
    }),
  );
  return keys.map((k) => found.get(`${k.eventId}:${k.reservationNumber}`) ?? null);
}

async function reservationsOfEvent(
  ctx: GatewayContext,
  eventId: number,
  numbers: number[],
  flags: ReservationFlags,
): Promise<(ReservationModel | null)[]> {
  const oneByOne = () => Promise.all(numbers.map((n) => getReservation(ctx, eventId, n, flags)));
  if (numbers.length <= RESERVATION_LOOKUPS_MAX) return oneByOne();
  const source = reservationSource(ctx, eventId, null, flags);
  const pages = await orNull(source.pageCount());
  if (pages === null) return numbers.map(() => null); // no such event
  if (pages >= numbers.length) return oneByOne();
  const all = await Promise.all(Array.from({ length: pages }, (_, i) => source.page(i + 1)));
  const byNumber = new Map(all.flatMap((page) => recordsOf(page).map((r) => [r.reservationNumber, r] as const)));
  return numbers.map((n) => byNumber.get(n) ?? null);
}

export function resolveReservationReference(
  ctx: GatewayContext,
  ref: Reference,
  flags: ReservationFlags,
): Promise<ReservationModel | null> | null {
  const eventId = keyNumber(ref, 'Reservation', 'eventId');
  const reservationNumber = keyNumber(ref, 'Reservation', 'reservationNumber');
  return eventId === null || reservationNumber === null
    ? null
    : reservationLoader(ctx, flags).load({ eventId, reservationNumber });
}

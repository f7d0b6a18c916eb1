import { formatDay, formatIsoWithOffset, formatTimestamp } from './dates.ts';
import type { AnswerRecord, EventRecord, HotelRecord, QuestionRecord, ReservationRecord } from './model.ts';
import type { Store } from './store.ts';

/** The response shapes of the service (docs/upstream.md). */

export function formatEvent(e: EventRecord) {
  return {
    eventId: e.eventId,
    name: e.name,
    city: e.city,
    state: e.state,
    address: e.address,
    zip: e.zip,
    startDate: formatIsoWithOffset(e.startMs, e.zone),
    endDate: formatIsoWithOffset(e.endMs, e.zone),
    cutOffDate: formatIsoWithOffset(e.cutOffMs, e.zone),
  };
}

export function formatHotel(h: HotelRecord, partnerview: boolean) {
  return {
    hotelId: h.hotelId,
    name: h.name,
    address: h.address,
    city: h.city,
    state: h.state,
    zip: h.zip,
    country: h.country,
    phone: h.phone,
    status: h.status,
    starRating: h.starRating,
    distanceMiles: h.distanceMiles,
    ...(partnerview ? { partnerHotelId: h.partnerHotelId } : {}),
  };
}

export interface DetailFlags {
  fullContactInfo?: boolean;
  detailedEventInfo?: boolean;
  detailedHotelInfo?: boolean;
  detailedSubBlockInfo?: boolean;
  customField?: boolean;
  partnerview?: boolean;
}

export function formatReservation(r: ReservationRecord, flags: DetailFlags, store: Store, zone: string) {
  const c = r.contact;
  const out: Record<string, unknown> = {
    reservationNumber: r.reservationNumber,
    eventId: r.eventId,
    status: r.status,
    hotelId: r.hotelId,
    hotelName: hotelOf(store, r)?.name ?? null,
    confirmationNumber: r.confirmationNumber,
    groupCode: r.groupCode,
    attendeeId: r.attendeeId,
    registrationEventId: r.registrationEventId,
    arrivalDate: formatDay(r.arrivalDay),
    departureDate: formatDay(r.departureDay),
    createdDate: formatTimestamp(r.createdMs, zone),
    modifiedDate: formatTimestamp(r.modifiedMs, zone),
    label1: r.label1,
    label2: r.label2,
    contact: flags.fullContactInfo
      ? { ...c }
      : { firstName: c.firstName, lastName: c.lastName, email: c.email, phone: c.phone },
    rooms: r.rooms.map((room) => ({
      roomId: room.roomId,
      roomTypeId: room.roomTypeId,
      roomType: room.roomType,
      status: room.status,
      arrivalDate: formatDay(room.arrivalDay),
      departureDate: formatDay(room.departureDay),
      occupancy: room.occupancy,
      guests: room.guests.map((g) => ({ ...g })),
      nightlyRates: room.nightlyRates.map((n) => ({ date: formatDay(n.day), amount: n.amount, currency: n.currency })),
    })),
  };
  if (flags.detailedEventInfo) out.event = formatEvent(store.events.get(r.eventId)!);
  if (flags.detailedHotelInfo) {
    const hotel = hotelOf(store, r);
    out.hotel = hotel ? formatHotel(hotel, flags.partnerview ?? false) : null;
  }
  if (flags.detailedSubBlockInfo) {
    const code = r.groupCode
      ? store.groupCodesByEvent.get(r.eventId)?.find((g) => g.groupCode === r.groupCode)
      : undefined;
    out.subBlock = code ? { subBlockId: code.subBlockId, groupCode: code.groupCode, name: code.name } : null;
  }
  if (flags.customField) out.customFields = customFieldsOf(store, r);
  if (flags.partnerview) out.partnerHotelId = hotelOf(store, r)?.partnerHotelId ?? null;
  return out;
}

function hotelOf(store: Store, r: ReservationRecord): HotelRecord | undefined {
  return store.hotelsByEvent.get(r.eventId)?.find((h) => h.hotelId === r.hotelId);
}

/**
 * Values set on the reservation, then those set on its attendee for fields it has no value of.
 * A field restricted to another event never shows, whichever way its value came.
 */
function customFieldsOf(store: Store, r: ReservationRecord) {
  const out: { customFieldId: number; name: string; value: string }[] = [];
  const seen = new Set<number>();
  for (const field of store.customFields.values()) {
    if (field.eventId !== null && field.eventId !== r.eventId) continue;
    const own = store.customFieldValues.get(`${field.customFieldId}|r|${r.reservationNumber}`);
    const viaAttendee =
      r.attendeeId && r.registrationEventId
        ? store.customFieldValues.get(`${field.customFieldId}|a|${r.attendeeId}|${r.registrationEventId}`)
        : undefined;
    const value = own ?? viaAttendee;
    if (value === undefined || seen.has(field.customFieldId)) continue;
    seen.add(field.customFieldId);
    out.push({ customFieldId: field.customFieldId, name: field.name, value });
  }
  return out;
}

/** A question as JSON text, its options in the order they were given. */
export function questionJson(q: QuestionRecord): string {
  const options =
    q.options === null
      ? 'null'
      : `{${q.options.map(([value, label]) => `${JSON.stringify(value)}:${JSON.stringify(label)}`).join(',')}}`;
  return `{"eventId":${q.eventId},"questionId":${q.questionId},"question":${JSON.stringify(q.question)},"type":${q.type},"options":${options},"enabled":${q.enabled}}`;
}

export function formatAnswer(a: AnswerRecord, store: Store, licensee: string, zone: string) {
  const r = store.reservationsByNumber.get(a.reservationNumber);
  const question =
    store.questions.get(`${licensee}|${a.eventId}|${a.questionId}`) ??
    store.questions.get(`${licensee}|0|${a.questionId}`);
  return {
    reservationNumber: a.reservationNumber,
    attendeeId: r?.attendeeId ?? null,
    registrationEventId: r?.registrationEventId ?? null,
    eventId: a.eventId,
    questionId: a.questionId,
    question: question?.question ?? null,
    answer: a.answer,
    answeredDate: formatTimestamp(a.answeredMs, zone),
  };
}

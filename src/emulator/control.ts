import { z } from 'zod';
import { dayOf, MAX_YEAR, MIN_YEAR, parseIsoDay } from './dates.ts';
import { faultsSchema } from './faults.ts';
import { RESERVATION_STATUSES, type ReservationRecord, type RoomRecord } from './model.ts';
import type { EmulatorState } from './state.ts';
import { variationsSchema } from './variations.ts';

/** The emulator's own control surface under /_emulator/ (docs/upstream.md); not part of the service. */

const clockSchema = z.union([
  z.strictObject({ advanceMs: z.number().int() }),
  z.strictObject({ now: z.iso.datetime({ offset: true }) }),
]);

const isoDay = z.string().refine((s) => parseIsoDay(s) !== null, 'must be a date like 2027-03-13');
const bookingSchema = z.strictObject({
  eventId: z.number().int(),
  /** Changes this reservation; absent, a new one is made. */
  reservationNumber: z.number().int().optional(),
  hotelId: z.number().int().optional(),
  roomTypeId: z.number().int().optional(),
  arrivalDate: isoDay.optional(),
  departureDate: isoDay.optional(),
  status: z.enum(RESERVATION_STATUSES).optional(),
  groupCode: z.string().nullable().optional(),
  attendeeId: z.string().optional(),
  registrationEventId: z.string().optional(),
  contact: z.record(z.string(), z.string()).optional(),
  answers: z.array(z.strictObject({ questionId: z.number().int(), answer: z.string() })).optional(),
});

export interface ControlResult {
  status: number;
  body: unknown;
}

export function handleControl(state: EmulatorState, method: string, url: URL, text: string | undefined): ControlResult {
  const action = url.pathname.slice('/_emulator/'.length);
  try {
    const body = text ? JSON.parse(text) : {};
    switch (`${method} ${action}`) {
      case 'GET requests':
        return ok({ requests: state.log });
      case 'POST reset':
        state.reset();
        return ok({ reset: true });
      case 'GET clock':
        return ok({ now: new Date(state.clock.now()).toISOString() });
      case 'POST clock': {
        const c = clockSchema.parse(body);
        const target = 'advanceMs' in c ? state.clock.now() + c.advanceMs : Date.parse(c.now);
        // Checked before anything moves: a refused change must leave the clock where it was.
        const year = new Date(target).getUTCFullYear();
        if (!(year >= MIN_YEAR && year <= MAX_YEAR))
          return fail(400, `the clock must stay in the years ${MIN_YEAR} to ${MAX_YEAR}`);
        state.moveClock(target);
        state.markDirty();
        state.store.sweepAttendees(state.clock.now());
        return ok({ now: new Date(state.clock.now()).toISOString() });
      }
      case 'POST faults':
        state.faults.set(faultsSchema.parse(body));
        return ok({ faults: body });
      case 'POST revoke-tokens':
        state.revokeTokens();
        return ok({ revoked: true });
      case 'GET variations':
        return ok({ variations: state.variations });
      case 'POST variations':
        state.variations = { ...state.variations, ...variationsSchema.parse(body) };
        return ok({ variations: state.variations });
      case 'POST bookings':
        state.markDirty();
        return book(state, bookingSchema.parse(body));
      default:
        return {
          status: 404,
          body: { error: { code: 'NOT_FOUND', message: `no control ${method} /_emulator/${action}` } },
        };
    }
  } catch (error) {
    const message = error instanceof z.ZodError ? z.prettifyError(error) : (error as Error).message;
    return { status: 400, body: { error: { code: 'INVALID_PARAMETER', message } } };
  }
}

const ok = (body: unknown): ControlResult => ({ status: 200, body });
const fail = (status: number, message: string): ControlResult => ({
  status,
  body: { error: { code: status === 404 ? 'NOT_FOUND' : 'INVALID_PARAMETER', message } },
});

/** An attendee books through a link: creates or changes a reservation, its answers and so the pickup. */
function book(state: EmulatorState, b: z.infer<typeof bookingSchema>): ControlResult {
  const { store, clock } = state;
  const event = store.events.get(b.eventId);
  if (!event) return fail(404, `event ${b.eventId} not found`);
  const now = clock.now();
  const existing = b.reservationNumber !== undefined ? store.reservationsByNumber.get(b.reservationNumber) : undefined;
  if (b.reservationNumber !== undefined && (!existing || existing.eventId !== b.eventId))
    return fail(404, `reservation ${b.reservationNumber} not found`);
  const hotels = store.hotelsByEvent.get(event.eventId) ?? [];
  const hotel = hotels.find((h) => h.hotelId === (b.hotelId ?? existing?.hotelId ?? hotels[0]?.hotelId));
  if (!hotel) return fail(404, `hotel ${b.hotelId} not found`);
  const roomType =
    hotel.roomTypes.find((t) => t.roomTypeId === (b.roomTypeId ?? existing?.rooms[0]?.roomTypeId)) ??
    hotel.roomTypes[0]!;
  const eventDay = dayOf(event.startMs);
  const arrivalDay = b.arrivalDate ? parseIsoDay(b.arrivalDate)! : (existing?.arrivalDay ?? eventDay - 1);
  const departureDay = b.departureDate ? parseIsoDay(b.departureDate)! : (existing?.departureDay ?? eventDay + 1);
  if (departureDay <= arrivalDay) return fail(400, 'departureDate must be after arrivalDate');
  const code = b.groupCode
    ? store.groupCodesByEvent.get(event.eventId)?.find((g) => g.groupCode === b.groupCode)
    : undefined;
  if (b.groupCode && !code) return fail(404, `group code ${b.groupCode} not found`);
  const status = b.status ?? existing?.status ?? 'new';
  const contact = { ...(existing?.contact ?? emptyContact()), ...(b.contact ?? {}) };
  const room: RoomRecord = {
    roomId: existing?.rooms[0]?.roomId ?? store.reservationsByNumber.size + 1_000_000,
    roomTypeId: roomType.roomTypeId,
    roomType: roomType.roomType,
    status: status === 'cancelled' ? 'cancelled' : 'active',
    arrivalDay,
    departureDay,
    occupancy: 1,
    guests: [{ firstName: contact.firstName, lastName: contact.lastName }],
    nightlyRates: Array.from({ length: departureDay - arrivalDay }, (_, i) => ({
      day: arrivalDay + i,
      amount: roomType.baseRate,
      currency: roomType.currency,
    })),
  };
  // A change is a copy: the demo data's records are shared by every store, and frozen.
  const reservation: ReservationRecord = existing
    ? { ...existing }
    : {
        reservationNumber: store.nextReservationNumber(),
        eventId: event.eventId,
        status,
        hotelId: hotel.hotelId,
        confirmationNumber: null,
        groupCode: null,
        subBlockId: null,
        attendeeId: null,
        registrationEventId: null,
        arrivalDay,
        departureDay,
        createdMs: now,
        modifiedMs: now,
        label1: null,
        label2: null,
        contact,
        rooms: [],
      };
  Object.assign(reservation, {
    status,
    hotelId: hotel.hotelId,
    arrivalDay,
    departureDay,
    modifiedMs: now,
    contact,
    rooms:
      existing &&
      b.roomTypeId === undefined &&
      b.arrivalDate === undefined &&
      b.departureDate === undefined &&
      b.status === undefined
        ? existing.rooms
        : [room],
    ...(b.groupCode !== undefined ? { groupCode: code?.groupCode ?? null, subBlockId: code?.subBlockId ?? null } : {}),
    ...(b.attendeeId !== undefined
      ? { attendeeId: b.attendeeId, registrationEventId: b.registrationEventId ?? null }
      : {}),
  });
  if (!existing) store.addReservation(reservation);
  else store.replaceReservation(reservation);
  for (const a of b.answers ?? []) {
    store.putAnswer({
      eventId: event.eventId,
      reservationNumber: reservation.reservationNumber,
      questionId: a.questionId,
      answer: a.answer,
      answeredMs: now,
    });
  }
  return ok({ reservationNumber: reservation.reservationNumber, created: !existing });
}

function emptyContact() {
  return {
    firstName: 'Guest',
    lastName: 'Booker',
    email: 'guest@example.com',
    phone: '',
    address: '',
    address2: '',
    city: '',
    state: '',
    zip: '',
    country: 'US',
    companyName: '',
    preferredGuestNumber: '',
  };
}

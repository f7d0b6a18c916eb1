import { DAY } from './dates.ts';
import {
  type AnswerRecord,
  type AttendeeRecord,
  type CustomFieldRecord,
  type DemoData,
  type EventRecord,
  type GroupCodeRecord,
  type HotelRecord,
  holdsRooms,
  type Licensee,
  type QuestionRecord,
  type ReservationRecord,
} from './model.ts';
import type { RawJson } from './route.ts';

const RETENTION_MS = 90 * DAY;

/** The emulator's mutable state, indexed for the handlers. Built afresh from demo data on reset. */
export class Store {
  readonly licensees = new Map<string, Licensee>();
  readonly events = new Map<number, EventRecord>();
  readonly hotelsByEvent = new Map<number, HotelRecord[]>();
  readonly groupCodesByEvent = new Map<number, GroupCodeRecord[]>();
  readonly blocks: Map<string, number>;
  /** Per event, ordered by reservationNumber ascending. */
  readonly reservationsByEvent = new Map<number, ReservationRecord[]>();
  readonly reservationsByNumber = new Map<number, ReservationRecord>();
  /** `${licensee}|${eventId}|${questionId}` */
  readonly questions = new Map<string, QuestionRecord>();
  /** Per event, `${reservationNumber}|${questionId}` → answer. */
  readonly answersByEvent = new Map<number, Map<string, AnswerRecord>>();
  readonly customFields = new Map<number, CustomFieldRecord>();
  /** `${customFieldId}|r|${reservationNumber}` or `${customFieldId}|a|${attendeeId}|${registrationEventId}` */
  readonly customFieldValues = new Map<string, string>();
  /** `${licensee}|${attendeeId}|${registrationEventId}` */
  readonly attendees = new Map<string, AttendeeRecord>();
  /** `${eventId}:${hotelId}:${day}` → rooms */
  readonly actualized = new Map<string, number>();
  /**
   * Serialized reservations by `${reservationNumber}|${flags}`: a page is then a join of strings.
   * Emptied whenever anything is written (see EmulatorState.markDirty).
   */
  readonly reservationJson = new Map<string, string>();
  /** Whole reservation pages by licensee and parameters, emptied with reservationJson. */
  readonly pageJson = new Map<string, RawJson>();
  /** Attendee key → end of the latest event in which a reservation is linked to it. */
  private readonly linkedEventEnd = new Map<string, number>();
  /** Attendee key → the events in which a reservation is linked to it. */
  private readonly linkedEvents = new Map<string, Set<number>>();
  private nextCustomFieldId = 1;

  constructor(data: DemoData) {
    for (const l of data.licensees) this.licensees.set(l.systemIdentifier, l);
    for (const e of data.events) this.events.set(e.eventId, structuredClone(e));
    for (const h of data.hotels) push(this.hotelsByEvent, h.eventId, structuredClone(h));
    for (const g of data.groupCodes) push(this.groupCodesByEvent, g.eventId, structuredClone(g));
    this.blocks = new Map(Object.entries(data.blocks));
    for (const r of data.reservations) this.addReservation(cloneReservation(r));
    for (const q of data.questions)
      this.questions.set(questionKey(q.licensee, q.eventId, q.questionId), structuredClone(q));
    for (const a of data.answers) this.putAnswer({ ...a });
    for (const c of data.customFields) {
      this.customFields.set(c.customFieldId, { ...c });
      this.nextCustomFieldId = Math.max(this.nextCustomFieldId, c.customFieldId + 1);
    }
    for (const v of data.customFieldValues)
      this.customFieldValues.set(`${v.customFieldId}|r|${v.reservationNumber}`, v.value);
    for (const a of data.attendees)
      this.attendees.set(attendeeKey(a.licensee, a.attendeeId, a.registrationEventId), {
        ...a,
        fields: { ...a.fields },
      });
  }

  eventOf(licensee: string, eventId: number): EventRecord | undefined {
    const event = this.events.get(eventId);
    return event && event.licensee === licensee ? event : undefined;
  }

  reservationOf(licensee: string, reservationNumber: number): ReservationRecord | undefined {
    const r = this.reservationsByNumber.get(reservationNumber);
    return r && this.events.get(r.eventId)?.licensee === licensee ? r : undefined;
  }

  addReservation(r: ReservationRecord): void {
    const list = this.reservationsByEvent.get(r.eventId) ?? [];
    this.reservationsByEvent.set(r.eventId, list);
    const last = list[list.length - 1];
    if (!last || last.reservationNumber < r.reservationNumber) list.push(r);
    else {
      list.push(r);
      list.sort((a, b) => a.reservationNumber - b.reservationNumber);
    }
    this.reservationsByNumber.set(r.reservationNumber, r);
    this.linkAttendee(r);
  }

  nextReservationNumber(): number {
    let max = 0;
    for (const n of this.reservationsByNumber.keys()) if (n > max) max = n;
    return max + 1;
  }

  putAnswer(a: AnswerRecord): void {
    let answers = this.answersByEvent.get(a.eventId);
    if (!answers) this.answersByEvent.set(a.eventId, (answers = new Map()));
    answers.set(`${a.reservationNumber}|${a.questionId}`, a);
  }

  /** Answers of an event ordered by reservationNumber then questionId. */
  answersOf(eventId: number): AnswerRecord[] {
    const list = [...(this.answersByEvent.get(eventId)?.values() ?? [])];
    return list.sort((a, b) => a.reservationNumber - b.reservationNumber || a.questionId - b.questionId);
  }

  /** Rooms picked up (new or accepted reservations, active rooms) per `${hotelId}:${roomTypeId}:${day}`. */
  pickupOf(eventId: number): Map<string, number> {
    const pickup = new Map<string, number>();
    for (const r of this.reservationsByEvent.get(eventId) ?? []) {
      if (!holdsRooms(r.status)) continue;
      for (const room of r.rooms) {
        if (room.status !== 'active') continue;
        for (let d = room.arrivalDay; d < room.departureDay; d++) {
          const key = `${r.hotelId}:${room.roomTypeId}:${d}`;
          pickup.set(key, (pickup.get(key) ?? 0) + 1);
        }
      }
    }
    return pickup;
  }

  createCustomField(licensee: string, name: string, eventId: number | null): CustomFieldRecord {
    const field = { licensee, customFieldId: this.nextCustomFieldId++, name, eventId };
    this.customFields.set(field.customFieldId, field);
    return field;
  }

  /** The attendee record, or undefined when there is none or retention has removed it. */
  attendee(licensee: string, attendeeId: string, registrationEventId: string, now: number): AttendeeRecord | undefined {
    const key = attendeeKey(licensee, attendeeId, registrationEventId);
    const a = this.attendees.get(key);
    if (!a) return undefined;
    if (now >= this.removalTime(a)) {
      this.attendees.delete(key);
      return undefined;
    }
    return a;
  }

  /** Removes every attendee record whose retention has run out. */
  sweepAttendees(now: number): void {
    for (const [key, a] of this.attendees) if (now >= this.removalTime(a)) this.attendees.delete(key);
  }

  /**
   * Retention (docs/upstream.md, "Limits"): 90 days after the earlier of the end of the latest event in
   * which a reservation is linked to the attendee, and the attendee's last update.
   */
  private removalTime(a: AttendeeRecord): number {
    const latestEnd = this.linkedEventEnd.get(attendeeKey(a.licensee, a.attendeeId, a.registrationEventId));
    const from = latestEnd === undefined ? a.updatedMs : Math.min(latestEnd, a.updatedMs);
    return from + RETENTION_MS;
  }

  /** Keeps the events, and the end of the latest one, that a reservation links each attendee to. */
  linkAttendee(r: ReservationRecord): void {
    if (!r.attendeeId || !r.registrationEventId) return;
    const event = this.events.get(r.eventId)!;
    const key = attendeeKey(event.licensee, r.attendeeId, r.registrationEventId);
    const known = this.linkedEventEnd.get(key);
    if (known === undefined || known < event.endMs) this.linkedEventEnd.set(key, event.endMs);
    let events = this.linkedEvents.get(key);
    if (!events) this.linkedEvents.set(key, (events = new Set()));
    events.add(event.eventId);
  }

  /** The events in which a reservation is linked to the attendee; none before it has booked. */
  eventsOfAttendee(licensee: string, attendeeId: string, registrationEventId: string): ReadonlySet<number> {
    return this.linkedEvents.get(attendeeKey(licensee, attendeeId, registrationEventId)) ?? NO_EVENTS;
  }

  putAttendee(a: AttendeeRecord): void {
    this.attendees.set(attendeeKey(a.licensee, a.attendeeId, a.registrationEventId), a);
  }
}

export function questionKey(licensee: string, eventId: number, questionId: number): string {
  return `${licensee}|${eventId}|${questionId}`;
}

function attendeeKey(licensee: string, attendeeId: string, registrationEventId: string): string {
  return `${licensee}|${attendeeId}|${registrationEventId}`;
}

const NO_EVENTS: ReadonlySet<number> = new Set();

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * A deep copy of a reservation, member by member: a reset copies all 28,000 of the demo data, and
 * structuredClone took five times as long (about 0.5 s a reset, 2 s under load).
 */
function cloneReservation(r: ReservationRecord): ReservationRecord {
  return {
    ...r,
    contact: { ...r.contact },
    rooms: r.rooms.map((room) => ({
      ...room,
      guests: room.guests.map((guest) => ({ ...guest })),
      nightlyRates: room.nightlyRates.map((rate) => ({ ...rate })),
    })),
  };
}

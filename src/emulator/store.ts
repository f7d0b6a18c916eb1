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
import type { RawJson } from './raw-json.ts';

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
  readonly reservationsByNumber: Map<number, ReservationRecord>;
  /** `${licensee}|${eventId}|${questionId}` */
  readonly questions = new Map<string, QuestionRecord>();
  /** Per event, `${reservationNumber}|${questionId}` → answer. */
  readonly answersByEvent = new Map<number, Map<string, AnswerRecord>>();
  readonly customFields = new Map<number, CustomFieldRecord>();
  /** `${customFieldId}|r|${reservationNumber}` or `${customFieldId}|a|${attendeeId}|${registrationEventId}` */
  readonly customFieldValues: Map<string, string>;
  /** `${licensee}|${attendeeId}|${registrationEventId}` */
  readonly attendees: Map<string, AttendeeRecord>;
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
  private readonly linkedEventEnd: Map<string, number>;
  /** Attendee key → the events in which a reservation is linked to it (a set is never changed: shared by stores, it is copied with the event added). */
  private readonly linkedEvents: Map<string, ReadonlySet<number>>;
  private nextCustomFieldId = 1;

  /**
   * A store over `data`. The demo data's records are shared by every store built from them, frozen,
   * and indexed once (`templateOf`): a store copies the indexes (pointers, 12–28 ms) instead of
   * 28,000 reservations (0.3–1 s, and most of a test run's garbage). What changes a shared record
   * puts a changed copy in its place (`replaceReservation`); assigning to one throws.
   */
  constructor(data: DemoData) {
    const template = templateOf(data);
    for (const l of data.licensees) this.licensees.set(l.systemIdentifier, l);
    for (const e of data.events) this.events.set(e.eventId, structuredClone(e));
    for (const h of data.hotels) push(this.hotelsByEvent, h.eventId, structuredClone(h));
    for (const g of data.groupCodes) push(this.groupCodesByEvent, g.eventId, structuredClone(g));
    this.blocks = new Map(Object.entries(data.blocks));
    for (const [eventId, list] of template.reservationsByEvent) this.reservationsByEvent.set(eventId, [...list]);
    this.reservationsByNumber = new Map(template.reservationsByNumber);
    this.linkedEventEnd = new Map(template.linkedEventEnd);
    this.linkedEvents = new Map(template.linkedEvents);
    for (const q of data.questions)
      this.questions.set(questionKey(q.licensee, q.eventId, q.questionId), structuredClone(q));
    for (const [eventId, answers] of template.answersByEvent) this.answersByEvent.set(eventId, new Map(answers));
    for (const c of data.customFields) {
      this.customFields.set(c.customFieldId, { ...c });
      this.nextCustomFieldId = Math.max(this.nextCustomFieldId, c.customFieldId + 1);
    }
    this.customFieldValues = new Map(template.customFieldValues);
    this.attendees = new Map(template.attendees);
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
    addReservation(this, r);
    this.linkAttendee(r);
  }

  /**
   * Puts `changed` in the place of the reservation with its number (a shared record is never
   * changed in place: a change is a copy, `{ ...r, … }`), and links its attendee.
   */
  replaceReservation(changed: ReservationRecord): void {
    const list = this.reservationsByEvent.get(changed.eventId) ?? [];
    const at = indexOfNumber(list, changed.reservationNumber);
    if (at < 0) throw new Error(`reservation ${changed.reservationNumber} is not in event ${changed.eventId}`);
    list[at] = changed;
    this.reservationsByNumber.set(changed.reservationNumber, changed);
    this.linkAttendee(changed);
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
    linkAttendee(this.events, this.linkedEventEnd, this.linkedEvents, r);
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

/** The indexes of one demo data set, built once and shared (copied) by every store made from it. */
interface Template {
  readonly reservationsByEvent: Map<number, ReservationRecord[]>;
  readonly reservationsByNumber: Map<number, ReservationRecord>;
  readonly linkedEventEnd: Map<string, number>;
  readonly linkedEvents: Map<string, ReadonlySet<number>>;
  readonly answersByEvent: Map<number, Map<string, AnswerRecord>>;
  readonly customFieldValues: Map<string, string>;
  readonly attendees: Map<string, AttendeeRecord>;
}

const templates = new WeakMap<DemoData, Template>();

/** The template of `data`, whose records are frozen from then on (the stores share them). */
function templateOf(data: DemoData): Template {
  let template = templates.get(data);
  if (template) return template;
  const events = new Map(data.events.map((e) => [e.eventId, e]));
  template = {
    reservationsByEvent: new Map(),
    reservationsByNumber: new Map(),
    linkedEventEnd: new Map(),
    linkedEvents: new Map(),
    answersByEvent: new Map(),
    customFieldValues: new Map(),
    attendees: new Map(),
  };
  for (const r of data.reservations) {
    addReservation(template, deepFreeze(r));
    linkAttendee(events, template.linkedEventEnd, template.linkedEvents, r);
  }
  for (const a of data.answers) {
    let answers = template.answersByEvent.get(a.eventId);
    if (!answers) template.answersByEvent.set(a.eventId, (answers = new Map()));
    answers.set(`${a.reservationNumber}|${a.questionId}`, deepFreeze(a));
  }
  for (const v of data.customFieldValues)
    template.customFieldValues.set(`${v.customFieldId}|r|${v.reservationNumber}`, v.value);
  for (const a of data.attendees)
    template.attendees.set(attendeeKey(a.licensee, a.attendeeId, a.registrationEventId), deepFreeze(a));
  templates.set(data, template);
  return template;
}

/** Adds a reservation to the indexes, keeping each event's list ordered by number. */
function addReservation(
  indexes: Pick<Template, 'reservationsByEvent' | 'reservationsByNumber'>,
  r: ReservationRecord,
): void {
  const list = indexes.reservationsByEvent.get(r.eventId) ?? [];
  indexes.reservationsByEvent.set(r.eventId, list);
  const last = list[list.length - 1];
  if (!last || last.reservationNumber < r.reservationNumber) list.push(r);
  else {
    list.push(r);
    list.sort((a, b) => a.reservationNumber - b.reservationNumber);
  }
  indexes.reservationsByNumber.set(r.reservationNumber, r);
}

/** Keeps the events, and the end of the latest one, that a reservation links its attendee to. */
function linkAttendee(
  events: ReadonlyMap<number, EventRecord>,
  linkedEventEnd: Map<string, number>,
  linkedEvents: Map<string, ReadonlySet<number>>,
  r: ReservationRecord,
): void {
  if (!r.attendeeId || !r.registrationEventId) return;
  const event = events.get(r.eventId)!;
  const key = attendeeKey(event.licensee, r.attendeeId, r.registrationEventId);
  const known = linkedEventEnd.get(key);
  if (known === undefined || known < event.endMs) linkedEventEnd.set(key, event.endMs);
  const linked = linkedEvents.get(key);
  if (linked?.has(event.eventId)) return;
  // A copy, never the set itself: a template's sets are shared by every store.
  linkedEvents.set(key, new Set(linked).add(event.eventId));
}

/** The position of reservation `n` in a list ordered by number, or -1. */
function indexOfNumber(list: readonly ReservationRecord[], n: number): number {
  let low = 0;
  let high = list.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const at = list[middle]!.reservationNumber;
    if (at === n) return middle;
    if (at < n) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

/** Freezes `value` and everything it holds, so that a change to a shared record throws. */
function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const member of Object.values(value)) deepFreeze(member);
  return Object.freeze(value);
}

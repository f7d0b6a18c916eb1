import type { ResultOf as Decoded, EndpointName } from './endpoints.ts';
import type { LazyList } from './lazy-list.ts';

/*
 * The service's records as the endpoint table decodes them, with the event each belongs to: the
 * one home of their types for every reader above the client (resolvers, schema, change feeds,
 * webhooks). Types only, derived from the table.
 */

/**
 * The decoded records keep unknown properties (zod's loose objects), which types as an index
 * signature; their readers work with the known properties only (unknown ones stay in `raw`).
 */
type Known<T> = T extends (infer U)[]
  ? Known<U>[]
  : T extends object
    ? { [K in keyof T as string extends K ? never : K]: K extends 'raw' ? T[K] : Known<T[K]> }
    : T;
type ResultOf<N extends EndpointName> = Known<Decoded<N>>;
/** The record type of a paged endpoint, whose answer is a LazyList. */
type RecordOf<N extends EndpointName> = Decoded<N> extends LazyList<infer R> ? Known<R> : never;

export type EventModel = ResultOf<'getevent'>;
export type HotelModel = ResultOf<'gethotels'>[number] & { eventId: number };
export type GroupCodeModel = ResultOf<'getgroupcodes'>[number] & { eventId: number };
export type PickupModel = ResultOf<'getpickup'>[number] & { eventId: number };
export type ShoppingViewHotelModel = ResultOf<'getshoppingviewhotels'>[number] & { eventId: number };
export type ReservationModel = RecordOf<'getreservation'> & { eventId: number };
export type QuestionModel = ResultOf<'geteventquestions'>[number] & { eventId: number };
export type AnswerModel = RecordOf<'getattendeeanswers'> & { eventId: number };
export type CustomFieldModel = ResultOf<'getcustomfields'>[number];
export interface AttendeeModel {
  attendeeId: string;
  registrationEventId: string;
}

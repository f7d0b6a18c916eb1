import type { ResultOf as Decoded, EndpointName, ParamsOf } from '../upstream/endpoints.ts';
import type { LazyList } from '../upstream/lazy-list.ts';

/**
 * The decoded records keep unknown properties (zod's loose objects), which types as an index
 * signature; the schema works with the known properties only (unknown ones stay in `raw`).
 */
type Known<T> = T extends (infer U)[]
  ? Known<U>[]
  : T extends object
    ? { [K in keyof T as string extends K ? never : K]: K extends 'raw' ? T[K] : Known<T[K]> }
    : T;
type ResultOf<N extends EndpointName> = Known<Decoded<N>>;
/** The record type of a paged endpoint, whose answer is a LazyList. */
type RecordOf<N extends EndpointName> = Decoded<N> extends LazyList<infer R> ? Known<R> : never;

/** What the resolvers hand to the schema: upstream records as decoded, with the event they belong to. */
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

/**
 * An endpoint's parameters as a client gives them, in GraphQL's terms: each optional, null as good
 * as absent, `Omitted` left out. The client's filters are declared once, by the endpoint table;
 * each GraphQL input is checked against its type here (schema/input-shape.ts).
 */
export type CriteriaOf<N extends EndpointName, Omitted extends keyof ParamsOf<N> = never> = {
  [K in Exclude<keyof ParamsOf<N>, Omitted>]?: ParamsOf<N>[K] | null;
};

/** A reservation filter: getreservation's criteria, modifiedAfterDate called modifiedAfter (an ISO 8601 instant). */
export type ReservationFilter = CriteriaOf<'getreservationpagecount', 'eventId' | 'modifiedAfterDate'> & {
  modifiedAfter?: ParamsOf<'getreservationpagecount'>['modifiedAfterDate'] | null;
};

/** A hotel filter: gethotels's criteria, applied by the gateway to the event's one hotel list. */
export type HotelFilter = CriteriaOf<'gethotels', 'eventId' | 'partnerview'>;

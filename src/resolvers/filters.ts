import type { EndpointName, ParamsOf } from '../upstream/endpoints.ts';

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

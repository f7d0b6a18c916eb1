import { checkParams } from '../upstream/params.ts';
import type { HotelModel } from '../upstream/records.ts';
import type { GatewayContext } from './context.ts';
import type { HotelFilter } from './filters.ts';
import { orNull } from './request-calls.ts';
import { checkInput } from './validate.ts';

const same = (a: string | null | undefined, b: string) => (a ?? '').toLowerCase() === b.toLowerCase();

/**
 * All hotels of an event come from one gethotels call per operation, filtered here with the
 * service's own rules (hotelId and status exact, name a case-insensitive substring, city and
 * state case-insensitive), so any number of hotel lookups and filters cost that one call.
 * `partnerview` is decided once per operation (whether it selects partnerHotelId anywhere).
 */
export async function listHotels(
  ctx: GatewayContext,
  eventId: number,
  partnerview: boolean,
  filter?: HotelFilter | null,
): Promise<HotelModel[]> {
  // Filtered here, not upstream, but held to the endpoint table's limits on the same filters.
  if (filter)
    checkInput('filter', () =>
      checkParams('gethotels', ctx.account, {
        eventId,
        hotelName: filter.hotelName ?? undefined,
        city: filter.city ?? undefined,
        state: filter.state ?? undefined,
      }),
    );
  const { all } = await hotelsOf(ctx, eventId, partnerview);
  if (!filter) return all;
  return all.filter(
    (h) =>
      (filter.hotelId == null || h.hotelId === filter.hotelId) &&
      (filter.hotelName == null || (h.name ?? '').toLowerCase().includes(filter.hotelName.toLowerCase())) &&
      (filter.city == null || same(h.city, filter.city)) &&
      (filter.state == null || same(h.state, filter.state)) &&
      (filter.status == null || h.status === filter.status),
  );
}

export async function getHotel(
  ctx: GatewayContext,
  eventId: number,
  hotelId: number,
  partnerview: boolean,
): Promise<HotelModel | null> {
  const hotels = await orNull(hotelsOf(ctx, eventId, partnerview));
  return hotels?.byId.get(hotelId) ?? null;
}

interface EventHotels {
  all: HotelModel[];
  byId: Map<number, HotelModel>;
}

/** Per gethotels answer (shared by every lookup of an operation, and by the cache), built once. */
const indexed = new WeakMap<object, EventHotels>();

/**
 * The event's hotels as models, indexed by id. A page of 1000 reservations asks for its hotels
 * 1000 times: each lookup is a map read, not a copy and scan of the list (docs/benchmarks.md).
 */
async function hotelsOf(ctx: GatewayContext, eventId: number, partnerview: boolean): Promise<EventHotels> {
  const answer = await ctx.calls.read('gethotels', { eventId, ...(partnerview ? { partnerview } : {}) });
  let hotels = indexed.get(answer);
  if (!hotels) {
    const all = answer.map((h) => ({ ...h, eventId }));
    hotels = { all, byId: new Map(all.map((h) => [h.hotelId, h])) };
    indexed.set(answer, hotels);
  }
  return hotels;
}

import type { GatewayContext } from './context.ts';
import { orNull } from './loaders.ts';
import type { HotelModel } from './models.ts';
import { checkParams } from '../upstream/params.ts';
import { checkInput } from './validate.ts';

export interface HotelFilter {
  hotelId?: number | null;
  hotelName?: string | null;
  city?: string | null;
  state?: string | null;
  status?: 'enabled' | 'disabled' | null;
}

const same = (a: string | null | undefined, b: string) => (a ?? '').toLowerCase() === b.toLowerCase();

/**
 * All hotels of an event come from one gethotels call per operation, filtered here with the
 * service's own rules (hotelId and status exact, name a case-insensitive substring, city and
 * state case-insensitive), so any number of hotel lookups and filters cost that one call.
 * `partnerview` is decided once per operation (whether it selects partnerHotelId anywhere).
 */
export async function listHotels(ctx: GatewayContext, eventId: number, partnerview: boolean, filter?: HotelFilter | null): Promise<HotelModel[]> {
  // Filtered here, not upstream, but held to the endpoint table's limits on the same filters.
  if (filter) checkInput('filter', () => checkParams('gethotels', ctx.licensee, { eventId, hotelName: filter.hotelName ?? undefined, city: filter.city ?? undefined, state: filter.state ?? undefined }));
  const all = (await ctx.loaders.call('gethotels', { eventId, ...(partnerview ? { partnerview } : {}) })).map((h) => ({ ...h, eventId }));
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

export async function getHotel(ctx: GatewayContext, eventId: number, hotelId: number, partnerview: boolean): Promise<HotelModel | null> {
  const hotels = await orNull(listHotels(ctx, eventId, partnerview));
  return hotels?.find((h) => h.hotelId === hotelId) ?? null;
}

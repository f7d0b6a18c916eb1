import type { GraphQLResolveInfo } from 'graphql';
import { idNumbers } from '../ids/local-id.ts';
import type { GatewayContext } from '../resolvers/context.ts';
import { resolveHotelReference } from '../resolvers/entities.ts';
import type { HotelFilter as HotelFilterShape } from '../resolvers/filters.ts';
import { getHotel, listHotels } from '../resolvers/hotel.ts';
import { scoped } from '../resolvers/request-calls.ts';
import { HOTEL_STATUSES } from '../upstream/vocabulary.ts';
import { builder } from './builder.ts';
import { costsNothing } from './cost.ts';
import { HotelStatus, known } from './enums.ts';
import { internalOnly } from './federation.ts';
import type { SameShape } from './input-shape.ts';
import { HotelRef, isNode, rawDescription } from './refs.ts';
import { wantsPartnerview } from './selection.ts';

/**
 * The hotel a record points at, from the event's hotel list: every such lookup in an operation
 * shares the one gethotels of its event.
 */
export function hotelOf(
  ctx: GatewayContext,
  info: GraphQLResolveInfo,
  eventId: number,
  hotelId: number | null | undefined,
) {
  return hotelId == null ? null : getHotel(scoped(ctx, info), eventId, hotelId, wantsPartnerview(info));
}

export const HotelFilter = builder.inputType('HotelFilter', {
  description: 'Criteria for the hotels of an event; all given ones must match.',
  fields: (t) => ({
    hotelId: t.int({ description: 'Exactly this hotel.' }),
    hotelName: t.string({ description: 'Part of the hotel’s name, any case.' }),
    city: t.string({ description: 'The city, any case.' }),
    state: t.string({ description: 'The state or province, any case.' }),
    status: t.field({ type: HotelStatus, description: 'Enabled or disabled for the event.' }),
  }),
});
true satisfies SameShape<typeof HotelFilter.$inferInput, HotelFilterShape>;

builder.asEntity(HotelRef, {
  key: builder.selection<{ eventId: number; hotelId: number }>('eventId hotelId'),
  resolveReference: (ref, ctx, info) => resolveHotelReference(ctx, ref, wantsPartnerview(info)),
});

builder.node(HotelRef, {
  description: 'A hotel assigned to an event.',
  id: { resolve: (h) => `${h.eventId}:${h.hotelId}`, parse: (id) => idNumbers(id, 2) },
  isTypeOf: isNode('Hotel'),
  loadOne: (numbers, ctx) => {
    const [eventId, hotelId] = numbers ?? [];
    return eventId === undefined || hotelId === undefined ? null : getHotel(ctx, eventId, hotelId, false);
  },
  fields: (t) => ({
    eventId: t.exposeInt('eventId', { description: 'The event this hotel is assigned to.', ...costsNothing }),
    hotelId: t.exposeInt('hotelId', { description: 'The service’s hotel identifier.', ...costsNothing }),
    name: t.exposeString('name', { nullable: true, description: 'Name of the hotel.', ...costsNothing }),
    address: t.exposeString('address', { nullable: true, description: 'Street address.', ...costsNothing }),
    city: t.exposeString('city', { nullable: true, description: 'City.', ...costsNothing }),
    state: t.exposeString('state', { nullable: true, description: 'State or province.', ...costsNothing }),
    zip: t.exposeString('zip', { nullable: true, description: 'Zip or postal code.', ...costsNothing }),
    country: t.exposeString('country', { nullable: true, description: 'Country.', ...costsNothing }),
    phone: t.exposeString('phone', { nullable: true, description: 'Phone number.', ...costsNothing }),
    status: t.field({
      type: HotelStatus,
      nullable: true,
      description: 'Whether the hotel is offered for the event.',
      ...costsNothing,
      resolve: (h) => known(HOTEL_STATUSES, h.status),
    }),
    starRating: t.exposeInt('starRating', { nullable: true, description: 'Star rating.', ...costsNothing }),
    distanceMiles: t.exposeFloat('distanceMiles', {
      nullable: true,
      description: 'Distance to the venue in miles.',
      ...costsNothing,
    }),
    partnerHotelId: t.string({
      nullable: true,
      description: 'The partner system’s identifier of the hotel (asked of the service only when selected).',
      // Asked with the hotel list that brought the hotel; the one call more of a hotel reached by id is `node`'s.
      ...costsNothing,
      resolve: async (h, _args, ctx, info) => {
        if (h.partnerHotelId !== undefined) return h.partnerHotelId;
        // Reached without partnerview (a lookup by global id): ask once for the event's hotels with it.
        const withIds = await listHotels(scoped(ctx, info), h.eventId, true);
        return withIds.find((x) => x.hotelId === h.hotelId)?.partnerHotelId ?? null;
      },
    }),
    raw: t.field({
      type: 'JSON',
      description: rawDescription,
      ...internalOnly,
      ...costsNothing,
      resolve: (h) => h.raw,
    }),
  }),
});

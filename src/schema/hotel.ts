import type { GraphQLResolveInfo } from 'graphql';
import type { GatewayContext } from '../resolvers/context.ts';
import { getHotel, listHotels } from '../resolvers/hotel.ts';
import { idNumbers } from '../resolvers/ids.ts';
import { resolveHotelReference } from '../resolvers/entities.ts';
import { internalOnly } from './federation.ts';
import { builder } from './builder.ts';
import type { HotelFilter as HotelFilterShape } from '../resolvers/models.ts';
import { HOTEL_STATUSES } from '../upstream/vocabulary.ts';
import { HotelStatus, known } from './enums.ts';
import type { SameShape } from './input-shape.ts';
import { HotelRef, isNode, rawDescription } from './refs.ts';
import { wantsPartnerview } from './selection.ts';

/**
 * The hotel a record points at, from the event's hotel list: every such lookup in an operation
 * shares the one gethotels of its event.
 */
export function hotelOf(ctx: GatewayContext, info: GraphQLResolveInfo, eventId: number, hotelId: number | null | undefined) {
  return hotelId == null ? null : getHotel(ctx, eventId, hotelId, wantsPartnerview(info));
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
    eventId: t.exposeInt('eventId', { description: 'The event this hotel is assigned to.' }),
    hotelId: t.exposeInt('hotelId', { description: 'The service’s hotel identifier.' }),
    name: t.exposeString('name', { nullable: true, description: 'Name of the hotel.' }),
    address: t.exposeString('address', { nullable: true, description: 'Street address.' }),
    city: t.exposeString('city', { nullable: true, description: 'City.' }),
    state: t.exposeString('state', { nullable: true, description: 'State or province.' }),
    zip: t.exposeString('zip', { nullable: true, description: 'Zip or postal code.' }),
    country: t.exposeString('country', { nullable: true, description: 'Country.' }),
    phone: t.exposeString('phone', { nullable: true, description: 'Phone number.' }),
    status: t.field({ type: HotelStatus, nullable: true, description: 'Whether the hotel is offered for the event.', resolve: (h) => known(HOTEL_STATUSES, h.status) }),
    starRating: t.exposeInt('starRating', { nullable: true, description: 'Star rating.' }),
    distanceMiles: t.exposeFloat('distanceMiles', { nullable: true, description: 'Distance to the venue in miles.' }),
    partnerHotelId: t.string({
      nullable: true,
      description: 'The partner system’s identifier of the hotel (asked of the service only when selected).',
      resolve: async (h, _args, ctx) => {
        if (h.partnerHotelId !== undefined) return h.partnerHotelId;
        // Reached without partnerview (a lookup by global id): ask once for the event's hotels with it.
        const withIds = await listHotels(ctx, h.eventId, true);
        return withIds.find((x) => x.hotelId === h.hotelId)?.partnerHotelId ?? null;
      },
    }),
    raw: t.field({ type: 'JSON', description: rawDescription, ...internalOnly, resolve: (h) => h.raw }),
  }),
});

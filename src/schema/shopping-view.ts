import type { ShoppingViewHotelModel } from '../upstream/records.ts';
import { builder } from './builder.ts';
import { costs, costsNothing, hotelOfEvent } from './cost.ts';
import { internalOnly } from './federation.ts';
import { hotelOf } from './hotel.ts';
import { Money } from './money.ts';
import { HotelRef, rawDescription, ShoppingViewHotelRef } from './refs.ts';
import { NightlyRate } from './reservation.ts';

type ShoppingRoom = NonNullable<ShoppingViewHotelModel['rooms']>[number];

const AvailableRoom = builder.objectRef<ShoppingRoom>('AvailableRoom').implement({
  description: 'A room type with inventory for every night of the stay.',
  fields: (t) => ({
    roomTypeId: t.exposeInt('roomTypeId', {
      nullable: true,
      description: 'Identifier of the room type.',
      ...costsNothing,
    }),
    roomType: t.exposeString('roomType', { nullable: true, description: 'Name of the room type.', ...costsNothing }),
    available: t.exposeInt('available', {
      nullable: true,
      description: 'Rooms available on every night of the stay.',
      ...costsNothing,
    }),
    rates: t.field({
      type: [NightlyRate],
      description: 'Rate of each night of the stay.',
      ...costsNothing,
      resolve: (r) => r.rates ?? [],
    }),
  }),
});

ShoppingViewHotelRef.implement({
  description: 'A hotel as the shopping view shows it.',
  fields: (t) => ({
    hotel: t.field({
      type: HotelRef,
      nullable: true,
      description: 'The hotel of the event.',
      ...costs(hotelOfEvent),
      resolve: (h, _args, ctx, info) => hotelOf(ctx, info, h.eventId, h.hotelId),
    }),
    name: t.exposeString('name', { nullable: true, description: 'Name of the hotel.', ...costsNothing }),
    starRating: t.exposeInt('starRating', { nullable: true, description: 'Star rating.', ...costsNothing }),
    description: t.exposeString('description', {
      nullable: true,
      description: 'Description shown to attendees.',
      ...costsNothing,
    }),
    pastCutoff: t.exposeBoolean('pastCutoff', {
      nullable: true,
      description: 'Whether the hotel is past its cut-off.',
      ...costsNothing,
    }),
    lowestRate: t.field({
      type: Money,
      nullable: true,
      description: 'Lowest nightly rate (scope SIMPLE with dates).',
      ...costsNothing,
      resolve: (h) => h.lowestRate ?? null,
    }),
    rooms: t.field({
      type: [AvailableRoom],
      nullable: true,
      description: 'Rooms available for the stay (scope FULL with dates).',
      ...costsNothing,
      resolve: (h) => h.rooms ?? null,
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

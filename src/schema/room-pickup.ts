import { costs, costsNothing, hotelOfEvent } from './cost.ts';
import { internalOnly } from './federation.ts';
import { hotelOf } from './hotel.ts';
import { HotelRef, RoomPickupRef, rawDescription } from './refs.ts';

RoomPickupRef.implement({
  description: 'Rooms blocked and picked up at one hotel, for one room type and night.',
  fields: (t) => ({
    hotel: t.field({
      type: HotelRef,
      nullable: true,
      description: 'The hotel.',
      ...costs(hotelOfEvent),
      resolve: (p, _args, ctx, info) => hotelOf(ctx, info, p.eventId, p.hotelId),
    }),
    roomTypeId: t.exposeInt('roomTypeId', {
      nullable: true,
      description: 'Identifier of the room type.',
      ...costsNothing,
    }),
    roomType: t.exposeString('roomType', { nullable: true, description: 'Name of the room type.', ...costsNothing }),
    date: t.field({
      type: 'Date',
      nullable: true,
      description: 'The night.',
      ...costsNothing,
      resolve: (p) => p.date ?? null,
    }),
    blocked: t.int({
      nullable: true,
      description: 'Rooms in the block for that night.',
      ...costsNothing,
      resolve: (p) => p.block ?? null,
    }),
    pickedUp: t.int({
      nullable: true,
      description: 'Rooms reserved for that night.',
      ...costsNothing,
      resolve: (p) => p.pickup ?? null,
    }),
    raw: t.field({
      type: 'JSON',
      description: rawDescription,
      ...internalOnly,
      ...costsNothing,
      resolve: (p) => p.raw,
    }),
  }),
});

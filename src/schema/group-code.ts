import { internalOnly } from './federation.ts';
import { hotelOf } from './hotel.ts';
import { GroupCodeRef, HotelRef, opaqueId, rawDescription } from './refs.ts';

GroupCodeRef.implement({
  description: 'A group code: access to a sub-block of special inventory at one hotel.',
  fields: (t) => ({
    id: t.id({ description: 'Stable id: the event and the code.', resolve: (g, _args, ctx) => opaqueId(ctx.licensee.id, 'GroupCode', g.eventId, g.groupCode) }),
    code: t.exposeString('groupCode', { description: 'The code attendees enter.' }),
    name: t.exposeString('name', { nullable: true, description: 'Name of the group.' }),
    hotel: t.field({
      type: HotelRef,
      nullable: true,
      description: 'The hotel of the sub-block.',
      resolve: (g, _args, ctx, info) => hotelOf(ctx, info, g.eventId, g.hotelId),
    }),
    subBlockId: t.exposeInt('subBlockId', { nullable: true, description: 'Identifier of the sub-block.' }),
    startDate: t.field({ type: 'Date', nullable: true, description: 'First night of the sub-block.', resolve: (g) => g.startDate ?? null }),
    endDate: t.field({ type: 'Date', nullable: true, description: 'Last day of the sub-block.', resolve: (g) => g.endDate ?? null }),
    rooms: t.exposeInt('rooms', { nullable: true, description: 'Rooms in the sub-block.' }),
    raw: t.field({ type: 'JSON', description: rawDescription, ...internalOnly, resolve: (g) => g.raw }),
  }),
});


import { idNumbers, idPart, idTextParts } from '../ids/local-id.ts';
import { getGroupCode } from '../resolvers/event.ts';
import { builder } from './builder.ts';
import { costs, costsNothing, hotelOfEvent } from './cost.ts';
import { internalOnly } from './federation.ts';
import { hotelOf } from './hotel.ts';
import { GroupCodeRef, HotelRef, isNode, rawDescription } from './refs.ts';

builder.node(GroupCodeRef, {
  description: 'A group code: access to a sub-block of special inventory at one hotel.',
  id: { resolve: (g) => `${g.eventId}:${idPart(g.groupCode)}`, parse: parseGroupCodeId },
  isTypeOf: isNode('GroupCode'),
  loadOne: (key, ctx) => (key === null ? null : getGroupCode(ctx, key.eventId, key.groupCode)),
  fields: (t) => ({
    code: t.exposeString('groupCode', { description: 'The code attendees enter.', ...costsNothing }),
    name: t.exposeString('name', { nullable: true, description: 'Name of the group.', ...costsNothing }),
    hotel: t.field({
      type: HotelRef,
      nullable: true,
      description: 'The hotel of the sub-block.',
      ...costs(hotelOfEvent),
      resolve: (g, _args, ctx, info) => hotelOf(ctx, info, g.eventId, g.hotelId),
    }),
    subBlockId: t.exposeInt('subBlockId', {
      nullable: true,
      description: 'Identifier of the sub-block.',
      ...costsNothing,
    }),
    startDate: t.field({
      type: 'Date',
      nullable: true,
      description: 'First night of the sub-block.',
      ...costsNothing,
      resolve: (g) => g.startDate ?? null,
    }),
    endDate: t.field({
      type: 'Date',
      nullable: true,
      description: 'Last day of the sub-block.',
      ...costsNothing,
      resolve: (g) => g.endDate ?? null,
    }),
    rooms: t.exposeInt('rooms', { nullable: true, description: 'Rooms in the sub-block.', ...costsNothing }),
    raw: t.field({
      type: 'JSON',
      description: rawDescription,
      ...internalOnly,
      ...costsNothing,
      resolve: (g) => g.raw,
    }),
  }),
});

/** `eventId:code`, or null when it cannot name a group code (no call is made for it). */
function parseGroupCodeId(localId: string): { eventId: number; groupCode: string } | null {
  const [eventText, code] = idTextParts(localId, 2) ?? [];
  const eventId = eventText === undefined ? undefined : idNumbers(eventText, 1)?.[0];
  return eventId === undefined || code === undefined ? null : { eventId, groupCode: code };
}

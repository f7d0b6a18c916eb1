import { formatDay, parseDay } from '../dates.ts';
import { formatEvent } from '../format.ts';
import { invalid, notFound } from '../params.ts';
import { ALL, type HandlerContext, type Route, V102 } from '../route.ts';

export function requireEvent(ctx: HandlerContext) {
  const event = ctx.store.eventOf(ctx.licensee.systemIdentifier, ctx.params.eventId as number);
  if (!event) throw notFound('event', 'eventId');
  return event;
}

export function requireHotel(ctx: HandlerContext, eventId: number, hotelId: number) {
  const hotel = ctx.store.hotelsByEvent.get(eventId)?.find((h) => h.hotelId === hotelId);
  if (!hotel) throw notFound('hotel', 'hotelId');
  return hotel;
}

const eventId = { type: 'int', required: true } as const;
const MAX_ROOMS = 2_147_483_647;

export const eventRoutes: Route[] = [
  {
    name: 'getevent',
    versions: ALL,
    params: { eventId },
    handle: (ctx) => formatEvent(requireEvent(ctx)),
  },
  {
    name: 'getgroupcodes',
    versions: ALL,
    params: { eventId },
    listName: 'groupCodes',
    handle(ctx) {
      const event = requireEvent(ctx);
      return (ctx.store.groupCodesByEvent.get(event.eventId) ?? []).map((g) => ({
        groupCode: g.groupCode,
        name: g.name,
        hotelId: g.hotelId,
        subBlockId: g.subBlockId,
        startDate: formatDay(g.startDay),
        endDate: formatDay(g.endDay),
        rooms: g.rooms,
      }));
    },
  },
  {
    name: 'getpickup',
    versions: V102,
    params: { eventId },
    listName: 'pickup',
    handle(ctx) {
      const event = requireEvent(ctx);
      const pickup = ctx.store.pickupOf(event.eventId);
      const hotels = new Map((ctx.store.hotelsByEvent.get(event.eventId) ?? []).map((h) => [h.hotelId, h]));
      const rows = [];
      // Blocks are kept in hotel, room type, night order.
      for (const [key, block] of ctx.store.blocks) {
        const [hotelId, roomTypeId, day] = key.split(':').map(Number) as [number, number, number];
        const hotel = hotels.get(hotelId);
        const roomType = hotel?.roomTypes.find((t) => t.roomTypeId === roomTypeId);
        if (!hotel || !roomType) continue;
        rows.push({
          hotelId,
          hotelName: hotel.name,
          roomTypeId,
          roomType: roomType.roomType,
          date: formatDay(day),
          block,
          pickup: pickup.get(key) ?? 0,
        });
      }
      return rows;
    },
  },
  {
    name: 'posteventhotelactualized',
    versions: V102,
    params: { eventId, hotelId: { type: 'int', required: true }, actualized: { type: 'json', required: true } },
    handle(ctx) {
      const event = requireEvent(ctx);
      const hotel = requireHotel(ctx, event.eventId, ctx.params.hotelId as number);
      const entries = ctx.params.actualized;
      if (!Array.isArray(entries)) throw invalid('actualized', 'actualized must be an array of {date, rooms}');
      if (entries.length === 0) throw invalid('actualized', 'actualized must not be empty');
      if (entries.length > 366) throw invalid('actualized', 'actualized holds more than 366 entries');
      const seen = new Set<number>();
      const parsed = entries.map((entry: unknown, i) => {
        const e = entry as { date?: unknown; rooms?: unknown };
        const day = typeof e?.date === 'string' ? parseDay(e.date) : null;
        if (day === null)
          throw invalid(
            'actualized',
            `actualized[${i}].date must be a date like 13-Mar-2027, in the years 1000 to 9999`,
          );
        // The same night twice is a caller's mistake: which of the two numbers it meant is unknown.
        if (seen.has(day)) throw invalid('actualized', `actualized[${i}].date ${formatDay(day)} is given twice`);
        seen.add(day);
        const rooms = typeof e.rooms === 'string' && /^\d+$/.test(e.rooms) ? Number(e.rooms) : e.rooms;
        // Number.isInteger(1e300) holds: bound the count, as a 32-bit integer column would.
        if (typeof rooms !== 'number' || !Number.isInteger(rooms) || rooms < 0 || rooms > MAX_ROOMS) {
          throw invalid('actualized', `actualized[${i}].rooms must be a whole number of rooms from 0 to ${MAX_ROOMS}`);
        }
        return { day, rooms };
      });
      for (const { day, rooms } of parsed) ctx.store.actualized.set(`${event.eventId}:${hotel.hotelId}:${day}`, rooms);
      return { success: true, stored: parsed.length };
    },
  },
];

import { type Day, formatDay } from '../dates.ts';
import { formatHotel } from '../format.ts';
import { HOTEL_STATUSES, type HotelRecord } from '../model.ts';
import { invalid, type ParamSpecs, type ValuesOf } from '../params.ts';
import { ALL, type HandlerContext, type Route, V102 } from '../route.ts';
import { requireEvent } from './events.ts';

const MAX_STAY_NIGHTS = 366;

const eq = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

const hotelSpecs = {
  eventId: { type: 'int', required: true },
  partnerview: { type: 'bool' },
  hotelId: { type: 'int' },
  hotelName: { type: 'string' },
  city: { type: 'string' },
  state: { type: 'string' },
  status: { type: HOTEL_STATUSES },
} satisfies ParamSpecs;

const shoppingViewSpecs = {
  eventId: { type: 'int', required: true },
  checkInDate: { type: 'isoDay' },
  checkOutDate: { type: 'isoDay' },
  scope: { type: ['full', 'simple'] },
  showPastCutoff: { type: 'bool' },
} satisfies ParamSpecs;

export const hotelRoutes: Route[] = [
  {
    name: 'gethotels',
    versions: ALL,
    params: hotelSpecs,
    listName: 'hotels',
    handle(ctx) {
      const event = requireEvent(ctx);
      const p = ctx.params as ValuesOf<typeof hotelSpecs>;
      return (ctx.store.hotelsByEvent.get(event.eventId) ?? [])
        .filter(
          (h) =>
            (p.hotelId === undefined || h.hotelId === p.hotelId) &&
            (p.hotelName === undefined || h.name.toLowerCase().includes(p.hotelName.toLowerCase())) &&
            (p.city === undefined || eq(h.city, p.city)) &&
            (p.state === undefined || eq(h.state, p.state)) &&
            (p.status === undefined || h.status === p.status),
        )
        .map((h) => formatHotel(h, p.partnerview ?? false));
    },
  },
  {
    name: 'getshoppingviewhotels',
    versions: V102,
    params: shoppingViewSpecs,
    listName: 'hotels',
    handle(ctx) {
      const event = requireEvent(ctx);
      const p = ctx.params as ValuesOf<typeof shoppingViewSpecs>;
      if ((p.checkInDate === undefined) !== (p.checkOutDate === undefined)) {
        throw invalid(
          p.checkInDate === undefined ? 'checkInDate' : 'checkOutDate',
          'checkInDate and checkOutDate go together',
        );
      }
      const stay = p.checkInDate !== undefined ? { from: p.checkInDate, to: p.checkOutDate! } : undefined;
      if (stay && stay.to <= stay.from) throw invalid('checkOutDate', 'checkOutDate must be after checkInDate');
      // Availability is worked out night by night: an unbounded stay held the service for minutes.
      if (stay && stay.to - stay.from > MAX_STAY_NIGHTS) {
        throw invalid(
          'checkOutDate',
          `a stay is at most ${MAX_STAY_NIGHTS} nights: checkOutDate is ${stay.to - stay.from} nights after checkInDate`,
        );
      }
      const now = ctx.clock.now();
      const pickup = stay ? ctx.store.pickupOf(event.eventId) : undefined;
      const out = [];
      for (const hotel of ctx.store.hotelsByEvent.get(event.eventId) ?? []) {
        if (!hotel.shoppingView) continue;
        const pastCutoff = now >= hotel.cutOffMs;
        if (pastCutoff && !p.showPastCutoff) continue;
        const rooms = stay ? availableRooms(ctx, hotel, stay, pickup!) : undefined;
        if (rooms && rooms.length === 0) continue;
        if (p.scope === 'simple') {
          const rates = rooms?.flatMap((r) => r.rates) ?? [];
          const lowest = rates.reduce<(typeof rates)[number] | undefined>(
            (low, r) => (!low || r.amount < low.amount ? r : low),
            undefined,
          );
          out.push({
            hotelId: hotel.hotelId,
            name: hotel.name,
            pastCutoff,
            ...(lowest ? { lowestRate: { amount: lowest.amount, currency: lowest.currency } } : {}),
          });
        } else {
          out.push({
            hotelId: hotel.hotelId,
            name: hotel.name,
            address: hotel.address,
            city: hotel.city,
            state: hotel.state,
            zip: hotel.zip,
            starRating: hotel.starRating,
            description: hotel.description,
            pastCutoff,
            ...(rooms ? { rooms } : {}),
          });
        }
      }
      return out;
    },
  },
];

/** Room types of the main block with inventory on every night of the stay, with their rates. */
function availableRooms(
  ctx: HandlerContext,
  hotel: HotelRecord,
  stay: { from: Day; to: Day },
  pickup: Map<string, number>,
) {
  const rooms = [];
  for (const roomType of hotel.roomTypes) {
    let available = Infinity;
    const rates = [];
    for (let d = stay.from; d < stay.to; d++) {
      const key = `${hotel.hotelId}:${roomType.roomTypeId}:${d}`;
      const block = ctx.store.blocks.get(key) ?? 0;
      available = Math.min(available, block - (pickup.get(key) ?? 0));
      rates.push({ date: formatDay(d), amount: roomType.baseRate, currency: roomType.currency });
    }
    if (available > 0) rooms.push({ roomTypeId: roomType.roomTypeId, roomType: roomType.roomType, available, rates });
  }
  return rooms;
}

import { type DetailFlags, formatReservation } from '../format.ts';
import { RESERVATION_STATUSES, type ReservationRecord, ROOM_STATUSES } from '../model.ts';
import { invalid, notFound, type ParamSpecs, type ValuesOf } from '../params.ts';
import { RawJson } from '../raw-json.ts';
import { type HandlerContext, LINKS, page, pageCount, type Route, V101_UP } from '../route.ts';
import { requireEvent } from './events.ts';

const filterSpecs = {
  eventId: { type: 'int', required: true },
  reservationNumber: { type: 'int' },
  hotelId: { type: 'int' },
  contactEmail: { type: 'string' },
  contactLastName: { type: 'string' },
  guestLastName: { type: 'string' },
  confirmationNumber: { type: 'string' },
  groupCode: { type: 'string' },
  reservationStatus: { type: RESERVATION_STATUSES },
  roomStatus: { type: ROOM_STATUSES },
  companyName: { type: 'string' },
  label1: { type: 'string' },
  label2: { type: 'string' },
  attendeeId: { type: 'string' },
  modifiedAfterDate: { type: 'timestamp' },
} satisfies ParamSpecs;

const flagSpecs = {
  fullContactInfo: { type: 'bool' },
  detailedEventInfo: { type: 'bool' },
  detailedHotelInfo: { type: 'bool' },
  detailedSubBlockInfo: { type: 'bool' },
  customField: { type: 'bool' },
  partnerview: { type: 'bool' },
} satisfies ParamSpecs;

const FILTER_NAMES = Object.keys(filterSpecs).filter((n) => n !== 'eventId') as (keyof Filters)[];
const FLAGS = Object.keys(flagSpecs) as (keyof typeof flagSpecs)[];

type Filters = Omit<ValuesOf<typeof filterSpecs>, 'eventId'>;

/** String filters are case-insensitive exact matches (docs/upstream.md, "Endpoints and versions"). */
const same = (value: string | null, wanted: string | undefined) =>
  wanted === undefined || (value !== null && value.toLowerCase() === wanted.toLowerCase());

function matches(r: ReservationRecord, f: Filters): boolean {
  return (
    (f.reservationNumber === undefined || r.reservationNumber === f.reservationNumber) &&
    (f.hotelId === undefined || r.hotelId === f.hotelId) &&
    same(r.contact.email, f.contactEmail) &&
    same(r.contact.lastName, f.contactLastName) &&
    (f.guestLastName === undefined ||
      r.rooms.some((room) => room.guests.some((g) => same(g.lastName, f.guestLastName)))) &&
    same(r.confirmationNumber, f.confirmationNumber) &&
    same(r.groupCode, f.groupCode) &&
    (f.reservationStatus === undefined || r.status === f.reservationStatus) &&
    (f.roomStatus === undefined || r.rooms.some((room) => room.status === f.roomStatus)) &&
    same(r.contact.companyName, f.companyName) &&
    same(r.label1, f.label1) &&
    same(r.label2, f.label2) &&
    same(r.attendeeId, f.attendeeId) &&
    // "modified since then": at or after the start of that minute.
    (f.modifiedAfterDate === undefined || r.modifiedMs >= f.modifiedAfterDate)
  );
}

function filtered(ctx: HandlerContext): ReservationRecord[] {
  const event = requireEvent(ctx);
  const f = ctx.params as Filters;
  const all = ctx.store.reservationsByEvent.get(event.eventId) ?? [];
  const filtering = FILTER_NAMES.some((name) => f[name] !== undefined);
  return filtering ? all.filter((r) => matches(r, f)) : all;
}

export const reservationRoutes: Route[] = [
  {
    name: 'getreservation',
    versions: V101_UP,
    params: { ...filterSpecs, ...flagSpecs, page: { type: 'int' } },
    listName: 'reservations',
    handle(ctx) {
      const pageNumber = (ctx.params.page as number | undefined) ?? 1;
      if (pageNumber < 1) throw invalid('page', 'page must be 1 or more');
      // Answers change only when something is written, which empties this cache.
      const pageKey = `${ctx.licensee.systemIdentifier}|${JSON.stringify(ctx.params)}`;
      const cached = ctx.store.pageJson.get(pageKey);
      if (cached) return cached;
      const flags = ctx.params as DetailFlags;
      const flagsKey = FLAGS.map((f) => (flags[f] ? 1 : 0)).join('');
      const cache = ctx.store.reservationJson;
      const parts = page(filtered(ctx), pageNumber).map((r) => {
        const key = `${r.reservationNumber}|${flagsKey}`;
        let text = cache.get(key);
        if (text === undefined) {
          text = JSON.stringify(formatReservation(r, flags, ctx.store, ctx.licensee.timeZone));
          cache.set(key, text);
        }
        return text;
      });
      const body = new RawJson(`[${parts.join(',')}]`);
      if (ctx.store.pageJson.size < 500) ctx.store.pageJson.set(pageKey, body);
      return body;
    },
  },
  {
    name: 'getreservationpagecount',
    versions: V101_UP,
    params: filterSpecs,
    pageCount: true,
    handle: (ctx) => pageCount(filtered(ctx).length),
  },
  {
    name: 'geteditreservationlink',
    versions: LINKS,
    params: { reservationNumber: { type: 'int', required: true } },
    handle(ctx) {
      const r = ctx.store.reservationOf(ctx.licensee.systemIdentifier, ctx.params.reservationNumber as number);
      if (!r) throw notFound('reservation', 'reservationNumber');
      return { link: `${ctx.baseUrl}/book/edit/${r.reservationNumber}?event=${r.eventId}` };
    },
  },
];

import { z } from 'zod';
import {
  mapPageOnce,
  memorySource,
  type PagedSource,
  recordsOf,
  sourceKey,
  UPSTREAM_PAGE,
} from '../connections/paged-source.ts';
import {
  type Connection,
  resolveWindow,
  type StreamableConnection,
  type WindowArgs,
  type WindowOptions,
} from '../connections/window.ts';
import type { ParamsOf, ResultOf } from '../upstream/endpoints.ts';
import type { LazyList } from '../upstream/lazy-list.ts';
import { checkParams } from '../upstream/params.ts';
import { withDefaults } from '../upstream/record-view.ts';
import type { ReservationModel } from '../upstream/records.ts';
import type { GatewayContext } from './context.ts';
import type { ReservationFilter } from './filters.ts';
import { orNull } from './request-calls.ts';
import { checkInput, validate } from './validate.ts';

/** The optional detail groups a selection needs (the rest of a reservation comes without flags). */
export interface ReservationFlags {
  fullContactInfo?: boolean;
  detailedSubBlockInfo?: boolean;
  customField?: boolean;
}

// The lengths of the text filters are the endpoint table's rules (checked in reservationSource).
const filterSchema = z.object({
  modifiedAfter: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time with offset' }).nullish(),
});

type WireFilter = ParamsOf<'getreservationpagecount'>;

function wireFilter(eventId: number, filter: ReservationFilter | null | undefined): WireFilter {
  const f = filter ?? {};
  if (filter) validate(filterSchema, filter, 'filter');
  const wire: Record<string, unknown> = { eventId };
  for (const [key, value] of Object.entries(f)) {
    if (value === null || value === undefined) continue;
    wire[key === 'modifiedAfter' ? 'modifiedAfterDate' : key] = value;
  }
  return wire as WireFilter;
}

function wireFlags(flags: ReservationFlags): Partial<ParamsOf<'getreservation'>> {
  const out: Record<string, boolean> = {};
  for (const [key, on] of Object.entries(flags)) if (on) out[key] = true;
  return out;
}

function withEvent(eventId: number, list: ResultOf<'getreservation'>): LazyList<ReservationModel> {
  return list.map((r) => withDefaults(r, { eventId }) as ReservationModel);
}

/** The reservations of an event under a filter, page by page through the request's calls (resolvers/request-calls.ts). */
export function reservationSource(
  ctx: GatewayContext,
  eventId: number,
  filter: ReservationFilter | null | undefined,
  flags: ReservationFlags,
): PagedSource<ReservationModel> {
  const wire = wireFilter(eventId, filter);
  checkInput('filter', () => checkParams('getreservationpagecount', ctx.account, wire), {
    modifiedAfterDate: 'modifiedAfter',
  });
  return {
    key: sourceKey(['reservations', wire]),
    licensee: ctx.account.systemIdentifier,
    pageCount: () => ctx.calls.read('getreservationpagecount', wire),
    // Deep pages wait behind first pages and counts when the budget's queue must choose.
    page: async (page) =>
      mapPageOnce(
        await ctx.calls.read(
          'getreservation',
          { ...wire, ...wireFlags(flags), page },
          { priority: page > 1 ? 'deep' : 'interactive' },
        ),
        (list) => withEvent(eventId, list),
      ),
    readAhead: (page) => ctx.calls.readAhead('getreservation', { ...wire, ...wireFlags(flags), page }),
    orderOf: byReservationNumber,
    onUndecodable: (positions) =>
      ctx.log?.warn(
        { endpoint: 'getreservation', eventId, positions },
        'reservations without a readable number skipped',
      ),
  };
}

/** The service lists reservations by reservation number, ascending (docs/upstream.md, getreservation). */
function byReservationNumber(r: ReservationModel): readonly number[] {
  return [r.reservationNumber];
}

type Filter = ReservationFilter | null | undefined;

export function listReservations(
  ctx: GatewayContext,
  eventId: number,
  filter: Filter,
  flags: ReservationFlags,
  window: WindowArgs,
): Connection<ReservationModel>;
export function listReservations(
  ctx: GatewayContext,
  eventId: number,
  filter: Filter,
  flags: ReservationFlags,
  window: WindowArgs,
  options: WindowOptions,
): StreamableConnection<ReservationModel>;
export function listReservations(
  ctx: GatewayContext,
  eventId: number,
  filter: Filter,
  flags: ReservationFlags,
  window: WindowArgs,
  options: WindowOptions = {},
): StreamableConnection<ReservationModel> {
  return resolveWindow(reservationSource(ctx, eventId, filter, flags), window, options);
}

export async function getReservation(
  ctx: GatewayContext,
  eventId: number,
  reservationNumber: number,
  flags: ReservationFlags,
): Promise<ReservationModel | null> {
  const page = await orNull(reservationSource(ctx, eventId, { reservationNumber }, flags).page(1));
  return page ? (recordsOf(page).find((r) => r.reservationNumber === reservationNumber) ?? null) : null;
}

/**
 * An attendee's reservations of one event: upstream filters by attendeeId, and we keep those of
 * this attendee's registration event. An attendee's reservations are few, so all are read and
 * totalCount stays exact.
 */
export function listAttendeeReservations(
  ctx: GatewayContext,
  attendee: { attendeeId: string; registrationEventId: string },
  eventId: number,
  flags: ReservationFlags,
  window: WindowArgs,
): Connection<ReservationModel> {
  const upstream = reservationSource(ctx, eventId, { attendeeId: attendee.attendeeId }, flags);
  const source = memorySource(
    { key: sourceKey(['attendee-reservations', eventId, attendee]), licensee: ctx.account.systemIdentifier },
    async () => {
      const all: ReservationModel[] = [];
      for (let page = 1; ; page++) {
        const records = await upstream.page(page);
        all.push(...recordsOf(records).filter((r) => r.registrationEventId === attendee.registrationEventId));
        if (records.length < UPSTREAM_PAGE) return all;
      }
    },
    byReservationNumber,
  );
  return resolveWindow(source, window);
}

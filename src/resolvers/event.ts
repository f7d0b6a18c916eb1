import { checkIdList } from '../ids/local-id.ts';
import { BadInputError } from '../upstream/errors.ts';
import type { EventModel, GroupCodeModel, PickupModel, ShoppingViewHotelModel } from '../upstream/records.ts';
import type { GatewayContext } from './context.ts';
import type { CriteriaOf } from './filters.ts';
import { orNull } from './request-calls.ts';

export function getEvent(ctx: GatewayContext, eventId: number): Promise<EventModel | null> {
  return orNull(ctx.calls.read('getevent', { eventId }));
}

/** In the order asked, null for unknown ids. */
export function listEvents(ctx: GatewayContext, eventIds: number[]): Promise<(EventModel | null)[]> {
  if (eventIds.length > 100)
    throw new BadInputError(`eventIds: at most 100 events at once, got ${eventIds.length}`, 'eventIds');
  // Every id is checked before the first call: one impossible id must not cost the others' calls.
  checkIdList(eventIds, 'eventIds');
  return Promise.all(eventIds.map((id) => getEvent(ctx, id)));
}

export async function listGroupCodes(ctx: GatewayContext, eventId: number): Promise<GroupCodeModel[]> {
  return (await ctx.calls.read('getgroupcodes', { eventId })).map((g) => ({ ...g, eventId }));
}

/** One group code of an event; null when the event or the code does not exist. */
export async function getGroupCode(
  ctx: GatewayContext,
  eventId: number,
  groupCode: string,
): Promise<GroupCodeModel | null> {
  return (await orNull(listGroupCodes(ctx, eventId)))?.find((g) => g.groupCode === groupCode) ?? null;
}

export async function listPickup(ctx: GatewayContext, eventId: number): Promise<PickupModel[]> {
  return (await ctx.calls.read('getpickup', { eventId })).map((p) => ({ ...p, eventId }));
}

export type ShoppingViewArgs = CriteriaOf<'getshoppingviewhotels', 'eventId'>;

export async function listShoppingViewHotels(
  ctx: GatewayContext,
  eventId: number,
  args: ShoppingViewArgs,
): Promise<ShoppingViewHotelModel[]> {
  const list = await ctx.calls.read('getshoppingviewhotels', {
    eventId,
    checkInDate: args.checkInDate ?? undefined,
    checkOutDate: args.checkOutDate ?? undefined,
    scope: args.scope ?? undefined,
    showPastCutoff: args.showPastCutoff ?? undefined,
  });
  return list.map((h) => ({ ...h, eventId }));
}

export function groupCodeLink(
  ctx: GatewayContext,
  args: { eventId: number; groupCode: string; attendeeId: string; registrationEventId: string },
) {
  return orNull(ctx.calls.read('getgroupcodelink', args).then((r) => r.link));
}

export function editReservationLink(ctx: GatewayContext, reservationNumber: number) {
  return orNull(ctx.calls.read('geteditreservationlink', { reservationNumber }).then((r) => r.link));
}

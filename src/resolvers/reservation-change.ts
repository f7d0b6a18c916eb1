import { changesAmong, instantOf, type ReservationChange } from '../changes/change.ts';
import { ChangeStream } from '../changes/change-stream.ts';
import type { FeedMembership } from '../changes/registry.ts';
import { readReservations, upstreamSource } from '../changes/upstream-source.ts';
import { BadInputError, NotFoundError } from '../upstream/errors.ts';
import { readOrNull } from '../upstream/record-view.ts';
import type { GatewayContext } from './context.ts';
import type { ReservationFilter } from './filters.ts';

/** The reservation filter's criteria that a subscriber's filter has (applied by the gateway to each change). */
export type ReservationChangeFilter = Pick<
  ReservationFilter,
  'hotelId' | 'groupCode' | 'reservationStatus' | 'attendeeId'
>;

export interface ReservationChangeArgs {
  eventId: number;
  /** ISO instant: replay the current state of records modified at or after it, then go live. */
  since?: string | null;
  filter?: ReservationChangeFilter | null;
}

/** What a subscriber's stream carries: changes, or the one failure that ends it. */
export type ChangeEvent = ReservationChange | { failure: unknown };

/**
 * How far ahead of our clock (or of the latest modification the service showed, when its clock is
 * ahead of ours) `since` may be: the service keeps minutes, so a time within the current minute is now.
 */
const FUTURE_TOLERANCE_MS = 60_000;

/**
 * The changes of one event for one subscriber: it joins the licensee's one feed of the event (which
 * polls for everyone), replays what changed since `since` first when asked, and keeps what its
 * filter matches. The stream is returned at once, so the response's headers go out before the
 * feed's baseline read; an unknown event or a `since` in the future then arrives on the stream as
 * its one failure, and ends it.
 */
export function subscribeReservationChanges(
  ctx: GatewayContext,
  args: ReservationChangeArgs,
): AsyncIterable<ChangeEvent> {
  const feeds = ctx.changeFeeds;
  if (!feeds) throw new Error('reservationChanged needs the gateway’s change feeds in the context');
  if (!(args.eventId > 0))
    throw new BadInputError(`eventId: must be a positive event id; got ${args.eventId}`, 'eventId');
  const matches = filterOf(args.filter);
  ctx.changeCursor?.at(args.since ?? new Date(ctx.upstream.serviceNow()).toISOString());

  // Live changes that arrive while the replay is read wait, so that the replay comes first.
  let held: ReservationChange[] | undefined = args.since ? [] : undefined;
  let replayed = new Set<string>();
  let membership: FeedMembership | undefined;
  const stream = new ChangeStream<ChangeEvent>(() => membership?.leave());
  const deliver = (changes: readonly ReservationChange[]) =>
    stream.push(changes.filter((change) => matches(change) && !replayed.has(change.key)));

  const begin = async () => {
    try {
      membership = await feeds.join(
        ctx.account,
        args.eventId,
        (changes) => (held ? held.push(...changes) : deliver(changes)),
        () => stream.finish(),
      );
    } catch (error) {
      throw error instanceof NotFoundError
        ? new BadInputError(`eventId: no event ${args.eventId} for this licensee`, 'eventId')
        : error;
    }
    // The client left during the baseline read.
    if (stream.ended) return membership.leave();
    if (!args.since) return;
    const since = instantOf(args.since);
    const now = Math.max(Date.now(), membership.latestModification());
    if (since > now + FUTURE_TOLERANCE_MS)
      throw new BadInputError(
        `since: ${args.since} is in the future; give a past instant (such as the last modifiedAt received) or leave it out`,
        'since',
      );
    // The service keeps no history: the replay is the current state of what was modified since then.
    // It waits behind interactive calls for the budget, like the feeds' polls.
    const replay = changesAmong(
      await upstreamSource(ctx.upstream, ctx.account, args.eventId, { priority: 'background' }).read(args.since),
      new Map(),
      since,
    );
    replayed = new Set(replay.map((change) => change.key));
    stream.push(replay.filter(matches));
    const waiting = held ?? [];
    held = undefined;
    deliver(waiting);
  };
  void begin().catch((failure: unknown) => {
    stream.push([{ failure }]);
    stream.finish();
  });
  return stream;
}

/** The subscriber's filter, applied by the gateway to each change (the feed polls unfiltered for everyone). */
function filterOf(filter: ReservationChangeFilter | null | undefined): (change: ReservationChange) => boolean {
  const wanted = filter ?? {};
  const same = (value: string | null | undefined, expected: string | null | undefined) =>
    expected == null || value?.toLowerCase() === expected.toLowerCase();
  return ({ reservation }) =>
    (wanted.hotelId == null || readOrNull(reservation, 'hotelId') === wanted.hotelId) &&
    same(readOrNull(reservation, 'groupCode'), wanted.groupCode) &&
    (wanted.reservationStatus == null || readOrNull(reservation, 'status') === wanted.reservationStatus) &&
    same(readOrNull(reservation, 'attendeeId'), wanted.attendeeId);
}

/** What our own write touched: one reservation by number, or an attendee's reservations. */
export type WrittenReservations =
  | { reservationNumber: number; eventId?: number | null }
  | { attendeeId: string; registrationEventId: string };

/**
 * After our own write that changed reservations, the feeds of their events tell the new state at
 * once (the service does not always move `modifiedAt` for it, and a poll would wait an interval).
 * Only events someone subscribes to are read: one read per such event, none without a feed. A
 * reservation's event is the one given, else each event watched on this replica. A failure here
 * is the feed's loss, never the write's: the mutation has succeeded and answers so.
 */
export async function tellOwnWrite(ctx: GatewayContext, written: WrittenReservations): Promise<void> {
  const feeds = ctx.changeFeeds;
  if (!feeds) return;
  const events =
    'reservationNumber' in written && written.eventId != null ? [written.eventId] : feeds.eventsWatched(ctx.account);
  await Promise.all(
    events.map(async (eventId) => {
      if (!(await feeds.watching(ctx.account, eventId))) return;
      try {
        const criteria =
          'reservationNumber' in written
            ? { reservationNumber: written.reservationNumber }
            : { attendeeId: written.attendeeId };
        const records = (await readReservations(ctx.upstream, ctx.account, eventId, criteria)).filter((record) =>
          'reservationNumber' in written
            ? record.reservationNumber === written.reservationNumber
            : record.registrationEventId === written.registrationEventId,
        );
        if (records.length > 0) await feeds.publish(ctx.account, eventId, records);
      } catch (error) {
        if (!(error instanceof NotFoundError))
          ctx.log?.warn(
            { eventId, code: (error as { code?: string }).code ?? 'unknown' },
            'own write not told to the change feed; its next poll will',
          );
      }
    }),
  );
}

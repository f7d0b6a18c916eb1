import { UPSTREAM_PAGE } from '../connections/paged-source.ts';
import type { UpstreamAccount } from '../upstream/account.ts';
import type { CallOptions, UpstreamClient } from '../upstream/client.ts';
import { withDefaults } from '../upstream/record-view.ts';
import type { ReservationModel } from '../upstream/records.ts';
import type { FeedSource } from './feed.ts';

export interface SourceOptions extends Pick<CallOptions, 'priority'> {
  /** The priority of a read of every record (a feed's baseline), when not `priority`. */
  wholePriority?: CallOptions['priority'];
  /**
   * A poll's read: it must see the service, not a page kept for UPSTREAM_PAGE_TTL_MS, and keeps no
   * page (neither cached nor as a stale copy: a large event's pages would stay in memory).
   */
  fresh?: boolean;
}

/**
 * An event's reservations read through the upstream client, every page, with every detail group
 * (one feed serves subscribers selecting any fields; the flags cost no extra call). `background`
 * for the pollers: their calls wait behind every interactive query for the budget.
 */
export function upstreamSource(
  upstream: UpstreamClient,
  licensee: UpstreamAccount,
  eventId: number,
  { fresh = false, wholePriority, ...options }: SourceOptions = {},
): FeedSource {
  const base = fresh ? { ...options, keep: false } : options;
  const callOptions = (modifiedAfter?: string) =>
    !modifiedAfter && wholePriority ? { ...base, priority: wholePriority } : base;
  const criteria = (modifiedAfter?: string) => (modifiedAfter ? { modifiedAfterDate: modifiedAfter } : {});
  return {
    read: (modifiedAfter) =>
      readReservations(upstream, licensee, eventId, criteria(modifiedAfter), callOptions(modifiedAfter)),
    pages: (modifiedAfter, firstPage) =>
      reservationPages(upstream, licensee, eventId, criteria(modifiedAfter), callOptions(modifiedAfter), firstPage),
  };
}

/** What a read of an event's reservations may ask for: changes since an instant, one reservation, one attendee's. */
export type ReservationCriteria = { modifiedAfterDate?: string; reservationNumber?: number; attendeeId?: string };

/**
 * Every page of an event's reservations matching `criteria`, with every detail group: the records
 * exactly as a feed's poll reads them, so that the same state hashes the same (change.ts).
 */
export async function readReservations(
  upstream: UpstreamClient,
  licensee: UpstreamAccount,
  eventId: number,
  criteria: ReservationCriteria,
  options: Pick<CallOptions, 'priority' | 'keep'> = {},
): Promise<ReservationModel[]> {
  const records: ReservationModel[] = [];
  for await (const page of reservationPages(upstream, licensee, eventId, criteria, options)) records.push(...page);
  return records;
}

/** The detail a feed reads each record with (a kept page read with the same holds the same form of it: kept-pages.ts). */
export const FEED_FLAGS = { fullContactInfo: true, detailedSubBlockInfo: true, customField: true } as const;

/** The same records page by page, each page read when the previous one has been used (and may be let go). */
export async function* reservationPages(
  upstream: UpstreamClient,
  licensee: UpstreamAccount,
  eventId: number,
  criteria: ReservationCriteria,
  options: Pick<CallOptions, 'priority' | 'keep'> = {},
  firstPage = 1,
): AsyncGenerator<ReservationModel[]> {
  for (let page = firstPage; ; page++) {
    const params = { eventId, page, ...FEED_FLAGS, ...criteria };
    const list = await upstream.call(licensee, 'getreservation', params, options);
    yield list.slice().map((record) => withDefaults(record, { eventId }) as ReservationModel);
    if (list.length < UPSTREAM_PAGE) return;
  }
}

import { createHash } from 'node:crypto';
import { stableKey } from '../upstream/cache.ts';
import { readOrNull } from '../upstream/record-view.ts';
import type { ReservationModel } from '../upstream/records.ts';
import type { ReservationStatus } from '../upstream/vocabulary.ts';

/** What happened to a reservation between two looks at it. */
export const CHANGE_KINDS = ['CREATED', 'CHANGED', 'CANCELLED'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** One change as subscribers receive it: the record's latest state, as the service holds it. */
export interface ReservationChange {
  kind: ChangeKind;
  /** The record's modification time (the service's clock, minute precision), ISO with offset. */
  modifiedAt: string | null;
  reservation: ReservationModel;
  /** Reservation number and content hash: the same pair is one change, however often it is read. */
  key: string;
}

/** What a feed remembers of a record it has seen: enough to tell the next change's kind. */
export interface SeenRecord {
  hash: string;
  cancelled: boolean;
}

/**
 * The hash of what the service holds for a record. `raw` is the record as received, so any change
 * the service makes to it (even to a field the gateway does not decode) is a change.
 */
export function contentHash(reservation: ReservationModel): string {
  // The first 12 bytes, 16 characters: a string of its own (a slice would keep the whole digest's text alive).
  return createHash('sha256')
    .update(stableKey(reservation.raw ?? reservation))
    .digest()
    .toString('base64url', 0, 12);
}

const isCancelled = (reservation: ReservationModel) =>
  readOrNull(reservation, 'status') === ('cancelled' satisfies ReservationStatus);

/**
 * The kind of a record seen now: CANCELLED when it is cancelled and was not when
 * last seen (or is seen for the first time, cancelled); CREATED when seen for the first time and made
 * at or after `baseline`; CHANGED otherwise. A record made and cancelled between two looks is
 * CANCELLED: a subscriber acting on CREATED would act on a reservation that no longer holds rooms.
 */
export function changeKind(
  reservation: ReservationModel,
  before: SeenRecord | undefined,
  baseline: number,
): ChangeKind {
  if (isCancelled(reservation) && !before?.cancelled) return 'CANCELLED';
  if (!before && instantOf(readOrNull(reservation, 'createdDate')) >= baseline) return 'CREATED';
  return 'CHANGED';
}

/**
 * The changes among `records` against what was seen (which is updated), in modification order:
 * by modification time, then by reservation number (the service keeps minutes, so changes within a
 * minute have no finer order). A record whose content is as last seen is no change.
 */
export function changesAmong(
  records: Iterable<ReservationModel>,
  seen: Map<number, SeenRecord>,
  baseline: number,
): ReservationChange[] {
  const changes: ReservationChange[] = [];
  for (const reservation of records) {
    const hash = contentHash(reservation);
    const before = seen.get(reservation.reservationNumber);
    if (before?.hash === hash) continue;
    changes.push({
      kind: changeKind(reservation, before, baseline),
      modifiedAt: readOrNull(reservation, 'modifiedDate') ?? null,
      reservation,
      key: `${reservation.reservationNumber}:${hash}`,
    });
    seen.set(reservation.reservationNumber, seenAs(reservation, hash));
  }
  return changes.sort(inModificationOrder);
}

/** Records known without being told (a baseline read): what the feed remembers of each, nothing more. */
export function remember(records: Iterable<ReservationModel>, seen: Map<number, SeenRecord>): void {
  for (const reservation of records)
    seen.set(reservation.reservationNumber, seenAs(reservation, contentHash(reservation)));
}

/** What a feed remembers of a record after this change (what a feed's successor must know of it). */
export function seenAfter(change: ReservationChange): [number, SeenRecord] {
  return [
    change.reservation.reservationNumber,
    seenAs(change.reservation, change.key.slice(change.key.indexOf(':') + 1)),
  ];
}

const seenAs = (reservation: ReservationModel, hash: string): SeenRecord => ({
  hash,
  cancelled: isCancelled(reservation),
});

export function inModificationOrder(a: ReservationChange, b: ReservationChange): number {
  return (
    instantOf(a.modifiedAt) - instantOf(b.modifiedAt) ||
    a.reservation.reservationNumber - b.reservation.reservationNumber
  );
}

/** ms since the epoch of an ISO instant; -Infinity for none (an unreadable time sorts first). */
export function instantOf(iso: string | null | undefined): number {
  const ms = iso ? Date.parse(iso) : NaN;
  return Number.isNaN(ms) ? -Infinity : ms;
}

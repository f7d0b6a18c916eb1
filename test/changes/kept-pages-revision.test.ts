import { describe, expect, it } from 'vitest';
import type { ReservationChange } from '../../src/changes/change.ts';
import { reviseKeptPages } from '../../src/changes/kept-pages.ts';
import { DROPPED } from '../../src/upstream/cache.ts';
import { KeptPage } from '../../src/upstream/kept-page.ts';
import type { ReservationModel } from '../../src/upstream/records.ts';

/*
 * Which kept page a change a feed read can be placed on with certainty (issue 37): the service pages
 * an event's reservations by number, 1000 a page, and each detail flag adds a group of fields.
 */
const FEED = { fullContactInfo: true, detailedSubBlockInfo: true, customField: true };
const record = (reservationNumber: number, status = 'new') => ({
  reservationNumber,
  status,
  contact: { firstName: 'A', lastName: 'B', email: 'a@b.example', phone: '1', city: 'Hillsboro' },
  subBlock: null,
  customFields: [],
});
const change = (kind: ReservationChange['kind'], raw: ReturnType<typeof record>): ReservationChange => ({
  kind,
  modifiedAt: null,
  key: `${raw.reservationNumber}:x`,
  reservation: { reservationNumber: raw.reservationNumber, raw } as unknown as ReservationModel,
});
const page = (records: unknown[]) =>
  new KeptPage(Buffer.from(JSON.stringify(records)), records, (text) => JSON.parse(text) as object);
const recordsOf = (value: unknown) =>
  JSON.parse((value as KeptPage).bytes.toString('utf8')) as {
    reservationNumber: number;
    status: string;
    contact: object;
  }[];
/** A page of `count` records numbered from `first`, in the form a query without flags reads. */
const plain = (first: number, count: number) =>
  Array.from({ length: count }, (_, i) => {
    const { subBlock, customFields, ...rest } = record(first + i);
    return { ...rest, contact: { firstName: 'A', lastName: 'B', email: 'a@b.example', phone: '1' } };
  });

describe('reviseKeptPages', () => {
  it('replaces a changed record where it stands, in the page’s form', () => {
    const revise = reviseKeptPages([change('CANCELLED', record(5, 'cancelled'))]);
    const revised = recordsOf(revise('getreservation', { eventId: 1, page: 1 }, page(plain(1, 10))));
    expect(revised[4]).toEqual({
      reservationNumber: 5,
      status: 'cancelled',
      contact: { firstName: 'A', lastName: 'B', email: 'a@b.example', phone: '1' },
    });
    expect(revised).toHaveLength(10);
    // The feed's own form on a page read with its flags.
    const full = recordsOf(revise('getreservation', { eventId: 1, page: 1, ...FEED }, page([record(5)])));
    expect(full).toEqual([record(5, 'cancelled')]);
  });

  it('leaves a page that does not hold a changed record, and a page count, as they are', () => {
    const revise = reviseKeptPages([change('CHANGED', record(1500))]);
    expect(revise('getreservation', { eventId: 1, page: 1 }, page(plain(1, 1000)))).toBeUndefined();
    expect(revise('getreservationpagecount', { eventId: 1 }, { pageCount: 2 })).toBeUndefined();
  });

  it('appends a new record numbered after every other to the last page with room; the count stands', () => {
    const revise = reviseKeptPages([change('CREATED', record(1002))]);
    // A full page: the record is on a later one.
    expect(revise('getreservation', { eventId: 1, page: 1 }, page(plain(1, 1000)))).toBeUndefined();
    const last = recordsOf(revise('getreservation', { eventId: 1, page: 2 }, page(plain(1001, 1))));
    expect(last.map((r) => r.reservationNumber)).toEqual([1001, 1002]);
    expect(revise('getreservationpagecount', { eventId: 1 }, { pageCount: 2 })).toBeUndefined();
  });

  it('drops what a change cannot be placed on: a filtered page, a new record before the end, a count a new record may have moved, a flag the feed does not read', () => {
    const created = reviseKeptPages([change('CREATED', record(3))]);
    expect(created('getreservation', { eventId: 1, page: 1 }, page(plain(1, 2).concat(plain(4, 3))))).toBe(DROPPED);
    // No kept last page took it: whether it began a page is not known.
    expect(created('getreservationpagecount', { eventId: 1 }, { pageCount: 1 })).toBe(DROPPED);
    const changed = reviseKeptPages([change('CHANGED', record(2))]);
    expect(changed('getreservation', { eventId: 1, page: 1, hotelId: 7 }, page(plain(1, 3)))).toBe(DROPPED);
    expect(changed('getreservationpagecount', { eventId: 1, reservationStatus: 'new' }, { pageCount: 1 })).toBe(
      DROPPED,
    );
    expect(changed('getreservation', { eventId: 1, page: 1, partnerview: true }, page(plain(1, 3)))).toBe(DROPPED);
    // A page past the last may now hold the new record (the last was full).
    const past = reviseKeptPages([change('CREATED', record(2001))]);
    expect(past('getreservation', { eventId: 1, page: 3 }, page([]))).toBe(DROPPED);
  });
});

import { UPSTREAM_PAGE } from '../connections/paged-source.ts';
import { DROPPED } from '../upstream/cache.ts';
import { RESERVATION_DETAIL_FLAGS } from '../upstream/endpoints.ts';
import { KeptPage } from '../upstream/kept-page.ts';
import type { ReservationChange } from './change.ts';
import { FEED_FLAGS } from './upstream-source.ts';

/**
 * The kept pages of an event's reservations brought up to date with what a change feed's poll read,
 * so that a read after a change is answered fresh from the kept page, without a call, instead of
 * each change every few seconds dropping them all (issue 37). The service pages an event's
 * reservations by reservation number, 1000 a page (docs/upstream.md); what can be placed with
 * certainty is placed:
 * - a changed record, on the kept page that holds it, in that page's form: the feed reads the
 *   fullest form a query asks for, and each detail flag adds a group of fields the contract names
 *   (`formOn`);
 * - a new record numbered after every other, at the end of the last page while it has room (a page
 *   of fewer than 1000 records is the last one), the page count then unchanged.
 * Anything else drops the answer (and leaves its copy to answer marked stale): a filtered page or
 * count (a change may move a record in or out), a new record placed before the end (every later
 * page shifts), a page or count a new record may have moved.
 */
export function reviseKeptPages(
  changes: readonly ReservationChange[],
): (name: string, params: Record<string, unknown>, value: unknown) => unknown {
  const byNumber = new Map(
    changes
      .map((change) => [numberOf(change), change] as const)
      .sort(([a], [b]) => a - b)
      .map(([number, change]) => [
        number,
        { raw: change.reservation.raw ?? change.reservation, created: change.kind === 'CREATED' },
      ]),
  );
  const created = [...byNumber].filter(([, change]) => change.created).map(([number]) => number);
  /** New records appended to a kept last page that had room for them: the page counts stand for these. */
  const appended = new Set<number>();
  const revisePage = (params: Record<string, unknown>, page: KeptPage): unknown => {
    if (filtered(params)) return DROPPED;
    const records = JSON.parse(page.bytes.toString('utf8')) as Numbered[];
    const added: number[] = [];
    let revised = false;
    for (const [number, { raw, created }] of byNumber) {
      const at = records.findIndex((record) => record.reservationNumber === number);
      const form = formOn(params, raw);
      if (at >= 0) {
        if (!form) return DROPPED;
        records[at] = form;
        revised = true;
        continue;
      }
      // A record changed elsewhere is on another page; a new one is placed by its number.
      if (!created) continue;
      const last = records.at(-1)?.reservationNumber;
      // Among or before this page's records (every later record moves), or past a last page that was full.
      if ((last !== undefined && number < last) || (last === undefined && params.page !== 1)) return DROPPED;
      // After them on a full page: on a later one.
      if (records.length >= UPSTREAM_PAGE) continue;
      // After them on the last page (it has room), or the first record of an event.
      if (!form) return DROPPED;
      records.push(form);
      added.push(number);
      revised = true;
    }
    if (records.length > UPSTREAM_PAGE) return DROPPED;
    for (const number of added) appended.add(number);
    return revised ? page.withBytes(Buffer.from(JSON.stringify(records))) : undefined;
  };
  return (name, params, value) => {
    if (name === 'getreservation') return value instanceof KeptPage ? revisePage(params, value) : DROPPED;
    // Revised after the pages (see gateway-feeds.ts): unchanged unless a new record may have begun a page.
    if (name === 'getreservationpagecount')
      return filtered(params) || !created.every((number) => appended.has(number)) ? DROPPED : undefined;
    return DROPPED;
  };
}

type Numbered = { reservationNumber: number };

const numberOf = (change: ReservationChange) => change.reservation.reservationNumber;

/** Parameters other than the event, the page and the flags: a filtered list. */
const filtered = (params: Record<string, unknown>) =>
  Object.keys(params).some((key) => key !== 'eventId' && key !== 'page' && !FLAGS.has(key));

const FLAGS = new Set<string>(RESERVATION_DETAIL_FLAGS);

/**
 * The record as a page read with `params`' flags holds it, from the form the feed read (FEED_FLAGS);
 * undefined for a flag the feed does not read. The groups each flag adds (docs/upstream.md):
 * `fullContactInfo` the contact's address, company and guest number, `detailedSubBlockInfo`
 * `subBlock`, `customField` `customFields`.
 */
function formOn(params: Record<string, unknown>, raw: unknown): Numbered | undefined {
  if (!isObject(raw) || NOT_READ.some((flag) => params[flag] === true)) return undefined;
  const form: Record<string, unknown> = { ...raw };
  if (params.fullContactInfo !== true && isObject(raw.contact)) {
    const { firstName, lastName, email, phone } = raw.contact;
    form.contact = { firstName, lastName, email, phone };
  }
  if (params.detailedSubBlockInfo !== true) delete form.subBlock;
  if (params.customField !== true) delete form.customFields;
  return form as Numbered;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Flags whose groups the feed does not read: a page read with one cannot be revised. */
const NOT_READ = [...FLAGS].filter((flag) => !(flag in FEED_FLAGS));

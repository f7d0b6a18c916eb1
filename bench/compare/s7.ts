import { count, noOutcomes, outcomeOf, staleMarked } from './outcome.ts';
import { S6_EVENTS, type SessionFigures } from './s6.ts';
import { postGraphQL } from './scenarios.ts';

/**
 * S7, a back-office table: simulated users paging through reservation lists with `totalCount`,
 * spread over three events (user i reads event S7_EVENTS[i % 3]) and over varied filters (none, a
 * status, a hotel, a hotel and a status). Each user pages forward with `after` from the previous
 * answer's `endCursor` and sometimes starts over with another filter; one request after the other,
 * as in S6. Where S6's users share a few first pages, S7's mostly do not: the budget runs out.
 */

/** Licensee 1001's three events of the demo data (25,600, 1000 and 1001 reservations). */
export const S7_EVENTS = S6_EVENTS;
export const S7_PAGE = 50;
export const S7_STATUSES = ['NEW', 'ACCEPTED', 'CANCELLED', 'DECLINED'] as const;
/** After each page, the chance a user starts over with another filter (a short list or a new search). */
export const S7_RESTART = 0.25;
/** The status a query is counted with when its connection failed before any answer came. */
export const NO_ANSWER = 599;

export const S7_QUERY = `query ($id: Int!, $after: String, $filter: ReservationFilter) { event(eventId: $id) { reservations(first: ${S7_PAGE}, after: $after, filter: $filter) { totalCount pageInfo { hasNextPage endCursor } edges { node { reservationNumber status arrivalDate hotel { name } } } } } }`;

export interface S7Filter {
  hotelId?: number;
  reservationStatus?: (typeof S7_STATUSES)[number];
}

export interface S7Figures extends SessionFigures {
  /** Answers with data marked `extensions.stale` (counted in `outcomes.ok` too). */
  stale: number;
}

/** A small seeded generator (mulberry32): each user clicks the same way from run to run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One of the four kinds of filter, equally often, with a hotel of the event and a status drawn evenly. */
export function pickFilter(random: () => number, hotelIds: readonly number[]): S7Filter | null {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  switch (Math.floor(random() * 4)) {
    case 0:
      return null;
    case 1:
      return { reservationStatus: pick(S7_STATUSES) };
    case 2:
      return { hotelId: pick(hotelIds) };
    default:
      return { hotelId: pick(hotelIds), reservationStatus: pick(S7_STATUSES) };
  }
}

/**
 * The hotel ids of each event, asked of the system itself before the measured part: its budget
 * accounts for the calls (asking the emulator directly would spend slots of the licensee's window
 * behind the gateway's back, and could cause a 429 that is the harness's doing).
 */
export async function hotelsOf(url: string): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>();
  for (const eventId of S7_EVENTS) {
    const data = await postGraphQL<{ event: { hotels: { hotelId: number }[] } }>(
      url,
      {},
      'query ($id: Int!) { event(eventId: $id) { hotels { hotelId } } }',
      { id: eventId },
    );
    if (!data.event.hotels.length) throw new Error(`S7: event ${eventId} has no hotels`);
    out.set(
      eventId,
      data.event.hotels.map((h) => h.hotelId),
    );
  }
  return out;
}

/** Runs `users` users concurrently until `seconds` have passed; an operation under way then still counts. */
export async function simulateTables(
  url: string,
  hotels: ReadonlyMap<number, readonly number[]>,
  users: number,
  seconds: number,
  /** Sees every answer (the soak looks for server errors in them). */
  onAnswer?: (status: number, text: string) => void,
): Promise<S7Figures> {
  const figures: S7Figures = { operations: 0, outcomes: noOutcomes(), latencies: [], stale: 0 };
  const until = performance.now() + seconds * 1000;
  const user = async (index: number) => {
    const eventId = S7_EVENTS[index % S7_EVENTS.length]!;
    const random = seeded(index + 1);
    let filter = pickFilter(random, hotels.get(eventId)!);
    let after: string | null = null;
    while (performance.now() < until) {
      const t0 = performance.now();
      let status = 0;
      let text = '';
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: S7_QUERY, variables: { id: eventId, after, filter } }),
        });
        status = res.status;
        text = await res.text();
      } catch (error) {
        status = NO_ANSWER; // the connection failed: a server error as far as the user is concerned
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        text = `fetch failed: ${cause?.code ?? ''} ${cause?.message ?? (error as Error).message}`.trim();
      }
      figures.latencies.push(performance.now() - t0);
      figures.operations++;
      count(figures.outcomes, status, text);
      onAnswer?.(status, text);
      const ok = outcomeOf(status, text) === 'ok';
      if (ok && staleMarked(text)) figures.stale++;
      // A page that did not come (refused, failed) sends the user to another list, as the end of one does.
      const next = ok ? pageInfoOf(text) : null;
      if (next?.hasNextPage && next.endCursor && random() >= S7_RESTART) after = next.endCursor;
      else {
        filter = pickFilter(random, hotels.get(eventId)!);
        after = null;
      }
    }
  };
  await Promise.all(Array.from({ length: users }, (_, i) => user(i)));
  return figures;
}

function pageInfoOf(text: string): { hasNextPage?: boolean; endCursor?: string } | null {
  try {
    const body = JSON.parse(text) as {
      data?: { event?: { reservations?: { pageInfo?: { hasNextPage?: boolean; endCursor?: string } } } };
    };
    return body.data?.event?.reservations?.pageInfo ?? null;
  } catch {
    return null;
  }
}

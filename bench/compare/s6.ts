import { count, noOutcomes, type OutcomeCounts } from './outcome.ts';
import type { SystemName } from './systems.ts';

/**
 * S6, a frontend session: simulated users, each opening an event page, its hotel list and two
 * reservation pages (of 50), again and again until the time is up, one request after the other.
 * User i reads event EVENTS[i % 3], so fifty users read the same first pages of the same three
 * events (what sharing across operations is for).
 */

export const S6_EVENTS = [5001, 5002, 5003] as const;
export const S6_PAGE = 50;

/** One step of a session: the request to send, given what the previous step answered. */
type Step = (eventId: number, previous: unknown) => { query: string; variables?: Record<string, unknown> };

const OURS_PAGE = `query ($id: Int!, $after: String) { event(eventId: $id) { reservations(first: ${S6_PAGE}, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { reservationNumber status arrivalDate hotel { name } } } } } }`;
const NAIVE_PAGE = `query ($id: Int!, $page: Int!) { event(eventId: $id) { reservations(first: ${S6_PAGE}, page: $page) { totalCount hasNextPage nodes { reservationNumber status arrivalDate hotel { name } } } } }`;
// Mesh reads the service's page of 1000 (a frontend shows 50 of it) and the page count for the total.
const MESH_PAGE = `query ($id: Int!) { getreservationpagecount(input: { eventId: $id }) { ... on PageCount_response { pageCount } } getreservation(input: { eventId: $id, page: 1 }) { ... on Reservation { reservationNumber status arrivalDate hotelName } } }`;

export const SESSIONS: Partial<Record<SystemName, Step[]>> = {
  ours: [
    () => ({ query: 'query ($id: Int!) { event(eventId: $id) { eventId name city startDate endDate } }' }),
    () => ({ query: 'query ($id: Int!) { event(eventId: $id) { hotels { hotelId name starRating } } }' }),
    () => ({ query: OURS_PAGE, variables: { after: null } }),
    (_, previous) => ({ query: OURS_PAGE, variables: { after: endCursorOf(previous) } }),
  ],
  naive: [
    () => ({ query: 'query ($id: Int!) { event(eventId: $id) { eventId name city startDate endDate } }' }),
    () => ({ query: 'query ($id: Int!) { event(eventId: $id) { hotels { hotelId name starRating } } }' }),
    () => ({ query: NAIVE_PAGE, variables: { page: 1 } }),
    () => ({ query: NAIVE_PAGE, variables: { page: 2 } }),
  ],
  mesh: [
    () => ({
      query:
        'query ($id: Int!) { getevent(input: { eventId: $id }) { ... on Event { eventId name city startDate endDate } } }',
    }),
    () => ({
      query: 'query ($id: Int!) { gethotels(input: { eventId: $id }) { ... on Hotel { hotelId name starRating } } }',
    }),
    () => ({ query: MESH_PAGE }),
    () => ({ query: MESH_PAGE }),
  ],
};

function endCursorOf(previous: unknown): string | null {
  const data = previous as { data?: { event?: { reservations?: { pageInfo?: { endCursor?: string } } } } } | undefined;
  return data?.data?.event?.reservations?.pageInfo?.endCursor ?? null;
}

export interface SessionFigures {
  operations: number;
  outcomes: OutcomeCounts;
  /** Every operation's time, in ms, for percentiles. */
  latencies: number[];
}

/** Runs `users` sessions concurrently until `seconds` have passed; an operation under way then still counts. */
export async function simulateUsers(
  url: string,
  headers: Record<string, string>,
  steps: readonly Step[],
  users: number,
  seconds: number,
): Promise<SessionFigures> {
  const figures: SessionFigures = { operations: 0, outcomes: noOutcomes(), latencies: [] };
  const until = performance.now() + seconds * 1000;
  const user = async (index: number) => {
    const eventId = S6_EVENTS[index % S6_EVENTS.length]!;
    while (performance.now() < until) {
      let previous: unknown;
      for (const step of steps) {
        if (performance.now() >= until) return;
        const { query, variables } = step(eventId, previous);
        const t0 = performance.now();
        let status = 0;
        let text = '';
        try {
          const res = await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...headers },
            body: JSON.stringify({ query, variables: { id: eventId, ...variables } }),
          });
          status = res.status;
          text = await res.text();
        } catch {
          status = 599; // the connection failed: a server error as far as the user is concerned
        }
        figures.latencies.push(performance.now() - t0);
        figures.operations++;
        count(figures.outcomes, status, text);
        previous = safeJson(text);
      }
    }
  };
  await Promise.all(Array.from({ length: users }, (_, i) => user(i)));
  return figures;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

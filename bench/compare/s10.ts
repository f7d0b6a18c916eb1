import { loadavg } from 'node:os';
import { sseData } from '../lib.ts';
import { busiestMinute, refused429, served } from './emulator.ts';
import { countJudgement, FreshnessLedger, noFreshness } from './freshness.ts';
import { outcomeOf, staleMarked } from './outcome.ts';
import { percentile } from './s6.ts';
import { hotelsOf, NO_ANSWER, pickFilter, S7_EVENTS, S7_QUERY, S7_RESTART, type S7Filter, seeded } from './s7.ts';
import { type KindCounts, type LiveEventRun, noKindCounts, tallyLogLine } from './s10-report.ts';
import { emulatorLog } from './soak.ts';

/**
 * S10, the live event (issue 37): the S7 frontend mix (users paging through reservation lists with
 * `totalCount`, filters and `after`), with an event page and a hotel list read before a new list half
 * the time, while attendees book: every S10_BOOK_EVERY_MS a booking at the emulator
 * (`/_emulator/bookings`) on one of the events being read, in turn a new reservation and a change of
 * the status of one on the event's first page. The emulator's real 240/min limit; ours at its
 * defaults, with one `reservationChanged` subscriber (SSE) per event, so that each event has a change
 * feed whose polls revise the gateway's kept pages, and an `upsertAttendee` through the gateway every
 * S10_WRITE_EVERY_MS. Each page answer is held against the bookings (bench/compare/freshness.ts): a
 * poll interval after a booking, or once the event's subscriber was told it if sooner, plus a margin,
 * an answer holding that reservation must show it, and an unfiltered page must count a new one,
 * unless marked stale.
 */

export const S10_EVENTS = S7_EVENTS;
export const S10_BOOK_EVERY_MS = 2_000;
export const S10_WRITE_EVERY_MS = 5_000;
/** On each new list, the chance that the user first opens the event page and its hotel list. */
export const S10_EVENT_PAGE_CHANCE = 0.5;
/** The gateway's CHANGES_POLL_INTERVAL_MS when the run sets none (docs/settings.md). */
export const DEFAULT_POLL_MS = 15_000;
/** Between the subscribers' acceptance and the measured part: the feeds read their first pages. */
const SETTLE_MS = 5_000;
/** A change's status in turn (never CANCELLED: the check counts every reservation in an unfiltered total). */
const STATUSES = ['NEW', 'ACCEPTED', 'DECLINED'] as const;

const EVENT_PAGE = 'query ($id: Int!) { event(eventId: $id) { eventId name city startDate endDate } }';
const HOTEL_LIST = 'query ($id: Int!) { event(eventId: $id) { hotels { hotelId name starRating } } }';
const SUBSCRIPTION =
  'subscription ($eventId: Int!) { reservationChanged(eventId: $eventId) { kind reservation { reservationNumber status } } }';
const WRITE =
  'mutation ($input: UpsertAttendeeInput!) { upsertAttendee(input: $input) { created attendee { attendeeId } } }';
const INTERNAL = 'INTERNAL_SERVER_ERROR';

export const S10_DESCRIPTION = (users: number, seconds: number, pollMs: number, marginMs: number) =>
  `S10, the live event: ${users} simulated users for ${seconds} s over events ${S10_EVENTS.join(', ')}, the S7 mix (reservation pages of 50 with \`totalCount\`, filtered by nothing, a status, a hotel or both, paged forward with \`after\`), an event page and its hotel list before a new list half the time; a booking at the emulator every ${S10_BOOK_EVERY_MS / 1000} s on those events (a new reservation and a change of the status of one on the event's first page, in turn), an \`upsertAttendee\` through the gateway every ${S10_WRITE_EVERY_MS / 1000} s; the emulator's real 240/min limit, ours at its defaults (change feeds polled every ${pollMs / 1000} s, four times less often while over 80 % of the budget is used) with one \`reservationChanged\` subscriber (SSE) per event. "Marked stale": data marked \`extensions.stale\`. Freshness: a change is due a poll interval (${pollMs / 1000} s) after the booking was answered, or when the event's subscriber was told it (the feed's poll read it) if sooner; from then on, plus ${marginMs / 1000} s, a page answer holding that reservation must show its new status and an unfiltered page must count a new one; an answer that does not, unmarked, is older than the feed's last poll. Upstream calls from the emulator's log during the measured part (the feeds' polls among them); served operations: reads answered with data and writes answered`;

export interface LiveEventOptions {
  users: number;
  seconds: number;
  /** The poll interval the gateway runs with (for the report). */
  pollMs: number;
  marginMs: number;
  tag: string;
  /** The gateway's stdout (its log at LOG_LEVEL warn): its warnings and errors during the run are counted. */
  gatewayLog?: NodeJS.ReadableStream | null;
}

interface Timed {
  status: number;
  text: string;
  startedAt: number;
  endedAt: number;
  ms: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function post(url: string, query: string, variables: Record<string, unknown>): Promise<Timed> {
  const startedAt = Date.now();
  const t0 = performance.now();
  let status: number;
  let text: string;
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
    });
    status = res.status;
    text = await res.text();
  } catch (error) {
    status = NO_ANSWER;
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    text = `fetch failed: ${cause?.code ?? ''} ${cause?.message ?? (error as Error).message}`.trim();
  }
  return { status, text, startedAt, endedAt: Date.now(), ms: performance.now() - t0 };
}

interface Page {
  totalCount?: number;
  pageInfo?: { hasNextPage?: boolean; endCursor?: string };
  edges?: { node: { reservationNumber: number; status: string } }[];
}

function pageOf(text: string): Page | null {
  try {
    return (
      (JSON.parse(text) as { data?: { event?: { reservations?: Page | null } | null } }).data?.event?.reservations ??
      null
    );
  } catch {
    return null;
  }
}

/** Each event's first page of 50 and its totalCount, asked of the gateway before anything is booked. */
async function firstPages(
  url: string,
): Promise<Map<number, { nodes: { reservationNumber: number; status: string }[]; totalCount: number }>> {
  const out = new Map<number, { nodes: { reservationNumber: number; status: string }[]; totalCount: number }>();
  for (const eventId of S10_EVENTS) {
    const answer = await post(url, S7_QUERY, { id: eventId, after: null, filter: null });
    const page = pageOf(answer.text);
    if (answer.status !== 200 || !page?.edges?.length || page.totalCount === undefined)
      throw new Error(`S10: the first page of event ${eventId} answered ${answer.status} ${answer.text.slice(0, 300)}`);
    out.set(eventId, { nodes: page.edges.map((e) => e.node), totalCount: page.totalCount });
  }
  return out;
}

/** Runs S10 against the gateway at `url` (its /graphql) over the emulator at `emulatorUrl`. */
export async function simulateLiveEvent(
  url: string,
  emulatorUrl: string,
  options: LiveEventOptions,
): Promise<LiveEventRun> {
  const hotels = await hotelsOf(url);
  const first = await firstPages(url);
  const ledger = new FreshnessLedger(
    new Map([...first].map(([eventId, p]) => [eventId, p.totalCount])),
    options.pollMs,
    options.marginMs,
  );
  const serverErrors: string[] = [];
  const noAnswer: string[] = [];
  const note = (list: string[], where: string, text: string) => {
    if (list.length < 20) list.push(`${new Date().toISOString()} ${where}: ${text.slice(0, 300)}`);
  };

  // One subscriber per event, live for the whole run: the events' change feeds.
  const aborts: AbortController[] = [];
  const readers: Promise<void>[] = [];
  const subscribers = { accepted: 0, of: S10_EVENTS.length, ended: [] as string[] };
  let running = true;
  for (const eventId of S10_EVENTS) {
    const abort = new AbortController();
    aborts.push(abort);
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: SUBSCRIPTION, variables: { eventId } }),
      signal: abort.signal,
    }).catch((error: Error) => error);
    if (res instanceof Error || res.status !== 200) {
      const why = res instanceof Error ? res.message : `${res.status} ${(await res.text()).slice(0, 200)}`;
      subscribers.ended.push(`event ${eventId} refused: ${why}`);
      if (!(res instanceof Error) && (res.status >= 500 || why.includes(INTERNAL)))
        note(serverErrors, 'subscribe', why);
      continue;
    }
    subscribers.accepted++;
    readers.push(
      (async () => {
        try {
          for await (const data of sseData(res.body!)) {
            const payload = JSON.parse(data) as {
              data?: { reservationChanged?: { reservation?: { reservationNumber: number; status: string } } };
              errors?: unknown;
            };
            if (payload.errors) {
              const text = JSON.stringify(payload.errors);
              if (text.includes(INTERNAL)) note(serverErrors, `subscriber of event ${eventId}`, text);
              subscribers.ended.push(`event ${eventId}: ${text.slice(0, 200)}`);
            }
            const r = payload.data?.reservationChanged?.reservation;
            if (r) ledger.told(r.reservationNumber, r.status, Date.now());
          }
          if (running) subscribers.ended.push(`event ${eventId}: the gateway ended the stream`);
        } catch (error) {
          if (!abort.signal.aborted) subscribers.ended.push(`event ${eventId}: ${(error as Error).message}`);
        }
      })(),
    );
  }
  await sleep(SETTLE_MS);

  const gatewayLog: Record<string, number> = {};
  let logTail = '';
  const onLog = (chunk: Buffer | string) => {
    const lines = (logTail + chunk.toString()).split('\n');
    logTail = lines.pop()!;
    for (const line of lines) tallyLogLine(line, gatewayLog);
  };
  options.gatewayLog?.on('data', onLog);

  const since = Date.now();
  const loadStart = loadavg()[0]!;
  const until = since + options.seconds * 1000;
  const live = () => Date.now() < until;
  const pages = noKindCounts();
  const eventPages = noKindCounts();
  const hotelLists = noKindCounts();
  const freshness = noFreshness();
  const latencies: number[] = [];

  const count = (k: KindCounts, answer: Timed, where: string): boolean => {
    k.operations++;
    latencies.push(answer.ms);
    if (answer.status === NO_ANSWER) {
      k.noAnswer++;
      note(noAnswer, where, answer.text);
      return false;
    }
    const outcome = outcomeOf(answer.status, answer.text);
    if (outcome === 'ok') {
      k.ok++;
      if (staleMarked(answer.text)) k.stale++;
      return true;
    }
    if (outcome === 'rate-limited') k.rateLimited++;
    else {
      k.errors++;
      if (outcome === 'server-error' || answer.text.includes(INTERNAL)) {
        k.serverErrors++;
        note(serverErrors, `${where} ${answer.status}`, answer.text);
      }
    }
    return false;
  };

  const user = async (index: number) => {
    const eventId = S10_EVENTS[index % S10_EVENTS.length]!;
    const random = seeded(index + 1);
    let filter: S7Filter | null = pickFilter(random, hotels.get(eventId)!);
    let after: string | null = null;
    let newList = true;
    while (live()) {
      if (newList && random() < S10_EVENT_PAGE_CHANCE) {
        count(eventPages, await post(url, EVENT_PAGE, { id: eventId }), `event page ${eventId}`);
        if (!live()) return;
        count(hotelLists, await post(url, HOTEL_LIST, { id: eventId }), `hotel list ${eventId}`);
        if (!live()) return;
      }
      newList = false;
      const where: string = `event ${eventId}, filter ${JSON.stringify(filter)}, ${after ? 'a later page' : 'the first page'}`;
      const answer = await post(url, S7_QUERY, { id: eventId, after, filter });
      const page: Page | null = count(pages, answer, `reservation page of ${where}`) ? pageOf(answer.text) : null;
      if (page) {
        const read = {
          eventId,
          unfiltered: filter === null,
          startedAt: answer.startedAt,
          endedAt: answer.endedAt,
          totalCount: page.totalCount ?? null,
          nodes: (page.edges ?? []).map((e) => e.node),
          staleMarked: staleMarked(answer.text),
        };
        countJudgement(freshness, read, ledger.judge(read), where);
      }
      // A page that did not come (refused, failed) sends the user to another list, as the end of one does.
      if (page?.pageInfo?.hasNextPage && page.pageInfo.endCursor && random() >= S7_RESTART)
        after = page.pageInfo.endCursor;
      else {
        filter = pickFilter(random, hotels.get(eventId)!);
        after = null;
        newList = true;
      }
    }
  };

  const bookings = { created: 0, changed: 0, refused: 0 };
  const statusOf = new Map<number, string>();
  for (const p of first.values()) for (const n of p.nodes) statusOf.set(n.reservationNumber, n.status);
  const nextChange = new Map<number, number>();
  const book = async () => {
    for (let i = 0; live(); i++) {
      const eventId = S10_EVENTS[i % S10_EVENTS.length]!;
      const create = i % 2 === 0;
      const body: Record<string, unknown> = { eventId };
      let status = 'NEW';
      if (!create) {
        const nodes = first.get(eventId)!.nodes;
        const at = nextChange.get(eventId) ?? 0;
        nextChange.set(eventId, at + 1);
        const number = nodes[at % nodes.length]!.reservationNumber;
        const was = statusOf.get(number) ?? 'NEW';
        status = STATUSES[(Math.max(0, STATUSES.indexOf(was as (typeof STATUSES)[number])) + 1) % STATUSES.length]!;
        Object.assign(body, { reservationNumber: number, status: status.toLowerCase() });
      }
      const sentAt = Date.now();
      try {
        const res = await fetch(`${emulatorUrl}/_emulator/bookings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
        const { reservationNumber } = (await res.json()) as { reservationNumber: number };
        ledger.record({
          eventId,
          reservationNumber,
          kind: create ? 'created' : 'changed',
          status,
          sentAt,
          answeredAt: Date.now(),
        });
        statusOf.set(reservationNumber, status);
        bookings[create ? 'created' : 'changed']++;
      } catch (error) {
        bookings.refused++;
        console.error(`S10: booking refused: ${(error as Error).message}`);
      }
      await sleep(Math.max(0, sentAt + S10_BOOK_EVERY_MS - Date.now()));
    }
  };

  const writes: {
    attendeeId: string;
    outcome: 'answered' | 'refused' | 'pending' | 'failed';
    detail: string;
    ms: number;
  }[] = [];
  const write = async () => {
    for (let n = 1; live(); n++) {
      const attendeeId = `live-${options.tag}-${n}`;
      const w = { attendeeId, outcome: 'pending' as (typeof writes)[number]['outcome'], detail: '', ms: 0 };
      writes.push(w);
      void (async () => {
        const answer = await post(url, WRITE, {
          input: { attendeeId, registrationEventId: `live-${options.tag}`, lastName: 'Live' },
        });
        w.ms = answer.ms;
        if (answer.status === NO_ANSWER) {
          w.outcome = 'failed';
          w.detail = answer.text;
          return;
        }
        if (answer.status >= 500 || answer.text.includes(INTERNAL))
          note(serverErrors, `upsertAttendee ${answer.status}`, answer.text);
        try {
          const body = JSON.parse(answer.text) as {
            data?: { upsertAttendee?: { attendee?: { attendeeId?: string } } | null };
            errors?: { message: string; extensions?: { code?: string } }[];
          };
          if (body.data?.upsertAttendee?.attendee?.attendeeId === attendeeId && !body.errors) w.outcome = 'answered';
          else if (answer.status < 500 && body.errors?.length) {
            w.outcome = 'refused';
            w.detail = body.errors[0]!.extensions?.code ?? 'no code';
          } else {
            w.outcome = 'failed';
            w.detail = `${answer.status} ${answer.text.slice(0, 200)}`;
          }
        } catch {
          w.outcome = 'failed';
          w.detail = `${answer.status} ${answer.text.slice(0, 200)}`;
        }
      })();
      await sleep(S10_WRITE_EVERY_MS);
    }
  };

  await Promise.all([...Array.from({ length: options.users }, (_, i) => user(i)), book(), write()]);
  const loadEnd = loadavg()[0]!;
  // The writes still in flight are answered (or time out) within the gateway's deadline.
  const inFlight = Date.now() + 30_000;
  while (writes.some((w) => w.outcome === 'pending') && Date.now() < inFlight) await sleep(200);
  running = false;
  options.gatewayLog?.off('data', onLog);
  for (const abort of aborts) abort.abort();
  await Promise.all(readers);

  const log = await emulatorLog(emulatorUrl, since);
  const applied = new Set(
    log
      .filter((c) => c.endpoint === 'postattendee' && c.fault === null && c.status >= 200 && c.status < 300)
      .map((c) => String(c.params.attendeeId ?? '')),
  );
  const refusals: Record<string, number> = {};
  for (const w of writes) if (w.outcome === 'refused') refusals[w.detail] = (refusals[w.detail] ?? 0) + 1;
  const answered = writes.filter((w) => w.outcome === 'answered');
  const refused = writes.filter((w) => w.outcome === 'refused').length;
  const writeMs = writes.filter((w) => w.outcome === 'answered' || w.outcome === 'refused').map((w) => w.ms);
  const tellMs = ledger.changes.filter((c) => c.toldAt !== null).map((c) => c.toldAt! - c.sentAt);
  return {
    seconds: options.seconds,
    users: options.users,
    pollMs: options.pollMs,
    load: [loadStart, loadEnd],
    pages,
    eventPages,
    hotelLists,
    writes: {
      sent: writes.length,
      answered: answered.length,
      refused,
      unanswered: writes.length - answered.length - refused,
      lost: answered.filter((w) => !applied.has(w.attendeeId)).length,
      refusals,
      p50Ms: percentile(writeMs, 50),
      p95Ms: percentile(writeMs, 95),
    },
    bookings,
    told: {
      told: tellMs.length,
      p50Ms: tellMs.length ? percentile(tellMs, 50) : Number.NaN,
      maxMs: tellMs.length ? Math.max(...tellMs) : Number.NaN,
    },
    subscribers,
    freshness,
    calls: served(log),
    upstream429: refused429(log),
    busiestMinute: busiestMinute(log),
    feedPolls: log.filter((c) => c.endpoint === 'getreservation' && c.params.modifiedAfterDate !== undefined).length,
    served: pages.ok + eventPages.ok + hotelLists.ok + answered.length,
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
    serverErrors,
    noAnswer,
    gatewayLog,
  };
}

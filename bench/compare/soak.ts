import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { sseData } from '../lib.ts';
import { hotelsOf, NO_ANSWER, seeded, simulateTables } from './s7.ts';
import { S8_EVENTS } from './s8.ts';

/**
 * The soak (issue 28, S9) and its checks, shared by `npm run bench -- compare --only S9` (30
 * minutes, bench/compare/s9.ts) and its shortened test (test/redis/soak.test.ts): replicas over one
 * emulator with its faults on, the S7 frontend mix, subscribers coming and going on both doors
 * (SSE streams; graphql-ws subscriptions ten a socket, sockets coming and going too), bookings at
 * the emulator (the changes subscribers must hear of), attendee pushes through the gateway's
 * `upsertAttendee` (the writes that must be answered or refused, applied once), and the tokens
 * revoked now and then. `runSoak` records what every client saw; `checkSoak` holds it against the
 * emulator's request log. Nothing here is timed: a check fails on what was lost, never on how late.
 */

export const SOAK_EVENTS = S8_EVENTS;
const QUERY =
  'subscription ($eventId: Int!) { reservationChanged(eventId: $eventId) { kind reservation { reservationNumber } } }';
const WRITE =
  'mutation ($input: UpsertAttendeeInput!) { upsertAttendee(input: $input) { created attendee { attendeeId } } }';
const SUBSCRIPTIONS_PER_SOCKET = 10;
/** A booking is owed to a subscriber once it was sent this long after the subscriber was accepted. */
const OWED_AFTER_MS = 1_000;
/** A subscriber that ended without leaving is owed nothing answered this long before its end. */
const END_GRACE_MS = 20_000;

export interface SoakFaults {
  rules: { endpoint?: string; latencyMs?: number; errorRate?: number; errorStatus?: number; resetRate?: number }[];
  seed?: number;
}

/** The faults of both the bench and the test: every call a little late, some 503s and resets. */
export const SOAK_FAULTS: SoakFaults = {
  rules: [{ endpoint: '*', latencyMs: 20, errorRate: 0.02, errorStatus: 503, resetRate: 0.01 }],
  seed: 28,
};

export interface SoakOptions {
  /** The replicas' /graphql addresses (clients are spread over them round robin). */
  urls: readonly string[];
  emulatorUrl: string;
  durationMs: number;
  /** Live subscribers at any time, half SSE, half graphql-ws (ten a socket). */
  subscribers: number;
  /** A subscription lives this long (drawn evenly between the two), then leaves and another comes. */
  lifetimeMs: readonly [number, number];
  /** A graphql-ws socket lives this long, its subscriptions coming and going meanwhile. */
  socketLifetimeMs: readonly [number, number];
  /** S7 users (split over the replicas). */
  users: number;
  bookEveryMs: number;
  writeEveryMs: number;
  revokeEveryMs: number;
  /** How long a leaving subscriber waits for the changes it is owed before it closes anyway. */
  drainMs: number;
  faults?: SoakFaults;
  /** Once, this far into the run (the Redis restart). */
  midway?: { atMs: number; run(): Promise<void> };
  /** Called every minute of the run (the bench samples its replicas). */
  everyMinute?: (minute: number) => void | Promise<void>;
  /** The events subscribed to and booked at (SOAK_EVENTS by default). */
  events?: readonly number[];
  /** A tag of the run: attendee ids are `soak-<tag>-<n>`. */
  tag: string;
  seed?: number;
}

export interface SoakSubscriber {
  door: 'sse' | 'ws';
  /** The replica it subscribed at. */
  url: string;
  eventId: number;
  /** When it was accepted (ms since epoch; for graphql-ws its socket's acknowledgement). */
  acceptedAt: number;
  /** When it chose to leave; null when the gateway ended it or it never started. */
  leftAt: number | null;
  /** When the gateway ended it (or it failed to start), and why. */
  endedAt: number | null;
  endReason: string | null;
  received: Set<number>;
  errors: string[];
}

export interface SoakBooking {
  eventId: number;
  number: number;
  sentAt: number;
  answeredAt: number;
}

export interface SoakWrite {
  attendeeId: string;
  outcome: 'answered' | 'refused' | 'failed';
  /** The refusal's code and message, or the failure. */
  detail: string;
}

export interface SoakRecord {
  startedAt: number;
  endedAt: number;
  subscribers: SoakSubscriber[];
  bookings: SoakBooking[];
  bookingsRefused: number;
  writes: SoakWrite[];
  /** Answers (any door) that were a 5xx or carried INTERNAL_SERVER_ERROR: where and what. */
  serverErrors: string[];
  /**
   * S7 queries that got no answer at all: the connection failed (reset, refused) before a status
   * came. Not answers, so not 5xx; counted apart because a process stopped for longer than its
   * keep-alive timeout (a heap snapshot) resets the requests clients sent meanwhile.
   */
  noAnswer: string[];
  operations: number;
  operationOutcomes: { ok: number; rateLimited: number; errors: number; serverErrors: number; stale: number };
  revocations: number;
}

export interface LoggedCall {
  at: string;
  endpoint: string;
  status: number;
  fault: string | null;
  params: Record<string, unknown>;
}

export interface SoakVerdict {
  subscribers: number;
  /** Subscribers the gateway ended (or never accepted), with reasons counted. */
  endedByGateway: Record<string, number>;
  /** Changes owed to subscribers, and those that never reached theirs. */
  owed: number;
  missed: number;
  /**
   * The missed ones by where the change did reach: no subscriber of its event at all (the feed never
   * told it), subscribers of the other replica only, or other subscribers of the same replica.
   */
  missedWhere: { toldNobody: number; otherReplicaOnly: number; sameReplica: number };
  /** Up to 10 examples of a missed change. */
  missedExamples: string[];
  writes: number;
  answered: number;
  refused: number;
  /** Writes the client got no answer for (a failed connection, a 5xx). */
  unanswered: number;
  /** Answered, yet the service never applied it. */
  lost: number;
  /** Applied more than once. */
  twice: number;
  /** Refusals by code. */
  refusals: Record<string, number>;
  /** Refused without doubt, yet applied. */
  refusedButApplied: number;
  serverErrors: string[];
  noAnswer: string[];
  /** Whether nothing above failed. */
  ok: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const INTERNAL = 'INTERNAL_SERVER_ERROR';

function reservationNumberOf(payload: unknown): number | undefined {
  return (payload as { data?: { reservationChanged?: { reservation?: { reservationNumber?: number } } } })?.data
    ?.reservationChanged?.reservation?.reservationNumber;
}

/**
 * The changes of its event a subscriber is owed: sent after it was accepted, answered before it left
 * or ended. Before: a booking answered in the very millisecond its subscriber began to leave may be
 * recorded after the leaving subscriber looked at what it is owed. A stream the gateway ended while
 * its subscriber was leaving (waiting for what it is owed) ended all the same: the subscriber was
 * told to resume, and is owed nothing answered in the END_GRACE_MS before.
 */
export function owedTo(subscriber: SoakSubscriber, bookings: readonly SoakBooking[]): SoakBooking[] {
  if (subscriber.acceptedAt === 0) return [];
  const until = Math.min(
    subscriber.leftAt ?? Number.POSITIVE_INFINITY,
    subscriber.endedAt === null ? Number.POSITIVE_INFINITY : subscriber.endedAt - END_GRACE_MS,
  );
  return bookings.filter(
    (b) =>
      b.eventId === subscriber.eventId && b.sentAt >= subscriber.acceptedAt + OWED_AFTER_MS && b.answeredAt < until,
  );
}

/**
 * Runs the soak; resolves with what every client saw once the run is over and every subscriber
 * has left (each first waiting, up to `drainMs`, for the changes it is owed).
 */
export async function runSoak(options: SoakOptions): Promise<SoakRecord> {
  const random = seeded(options.seed ?? 28);
  const between = ([a, b]: readonly [number, number]) => a + random() * (b - a);
  const record: SoakRecord = {
    startedAt: Date.now(),
    endedAt: 0,
    subscribers: [],
    bookings: [],
    bookingsRefused: 0,
    writes: [],
    serverErrors: [],
    noAnswer: [],
    operations: 0,
    operationOutcomes: { ok: 0, rateLimited: 0, errors: 0, serverErrors: 0, stale: 0 },
    revocations: 0,
  };
  const until = record.startedAt + options.durationMs;
  const running = () => Date.now() < until;
  let nextUrl = 0;
  const pickUrl = () => options.urls[nextUrl++ % options.urls.length]!;
  let nextEvent = 0;
  const events = options.events ?? SOAK_EVENTS;
  const pickEvent = () => events[nextEvent++ % events.length]!;
  const note = (list: string[], where: string, text: string) => {
    if (list.length < 1000) list.push(`${new Date().toISOString()} ${where}: ${text.slice(0, 300)}`);
  };
  const serverError = (where: string, text: string) => note(record.serverErrors, where, text);

  await control(options.emulatorUrl, 'faults', options.faults ?? SOAK_FAULTS);

  /** Waits until the subscriber has every change owed so far, the run has ended the subscription, or `drainMs`. */
  const drain = async (subscriber: SoakSubscriber) => {
    const leaving = Date.now();
    const deadline = leaving + options.drainMs;
    const owedNow = () =>
      owedTo({ ...subscriber, leftAt: leaving }, record.bookings).filter((b) => !subscriber.received.has(b.number));
    while (Date.now() < deadline && subscriber.endedAt === null && owedNow().length > 0) await sleep(100);
    return leaving;
  };

  const newSubscriber = (door: 'sse' | 'ws', eventId: number, url: string): SoakSubscriber => {
    const subscriber: SoakSubscriber = {
      door,
      url,
      eventId,
      acceptedAt: 0,
      leftAt: null,
      endedAt: null,
      endReason: null,
      received: new Set(),
      errors: [],
    };
    record.subscribers.push(subscriber);
    return subscriber;
  };
  const onPayload = (subscriber: SoakSubscriber, payload: { errors?: unknown }, where: string) => {
    if (payload.errors) {
      const text = JSON.stringify(payload.errors);
      subscriber.errors.push(text.slice(0, 300));
      if (text.includes(INTERNAL)) serverError(where, text);
    }
    const number = reservationNumberOf(payload);
    if (number !== undefined) subscriber.received.add(number);
  };
  const ended = (subscriber: SoakSubscriber, reason: string) => {
    if (subscriber.leftAt !== null || subscriber.endedAt !== null) return;
    subscriber.endedAt = Date.now();
    // The error it was told last, by code and, for a limit, the setting it names.
    const told = subscriber.errors.at(-1);
    const code = told && /"code":"([A-Z_]+)"(?:[^}]*"limit":"([A-Z_]+)")?/.exec(told);
    subscriber.endReason = code ? `${reason} (${code[1]}${code[2] ? ` ${code[2]}` : ''})` : reason;
  };

  /** One SSE subscriber slot: a stream after another until the run ends. */
  const sseSlot = async () => {
    while (running()) {
      const url = pickUrl();
      const subscriber = newSubscriber('sse', pickEvent(), url);
      const abort = new AbortController();
      const lifetime = between(options.lifetimeMs);
      let response: Response | null = null;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify({ query: QUERY, variables: { eventId: subscriber.eventId } }),
          signal: abort.signal,
        });
      } catch (error) {
        ended(subscriber, `no connection: ${(error as Error).message}`);
      }
      if (response && response.status !== 200) {
        const text = await response.text().catch(() => '');
        if (response.status >= 500 || text.includes(INTERNAL)) serverError(`SSE subscribe ${response.status}`, text);
        ended(subscriber, `refused ${response.status} ${/"code":"([A-Z_]+)"/.exec(text)?.[1] ?? ''}`.trim());
      }
      if (response?.status === 200) {
        subscriber.acceptedAt = Date.now();
        const reading = (async () => {
          try {
            for await (const data of sseData(response.body!))
              onPayload(subscriber, JSON.parse(data) as { errors?: unknown }, 'SSE event');
            ended(subscriber, 'the gateway ended the stream');
          } catch (error) {
            if (!abort.signal.aborted) ended(subscriber, `stream failed: ${(error as Error).message}`);
          }
        })();
        const leaveAt = Math.min(until, Date.now() + lifetime);
        while (Date.now() < leaveAt && subscriber.endedAt === null) await sleep(Math.min(500, leaveAt - Date.now()));
        if (subscriber.endedAt === null) subscriber.leftAt = await drain(subscriber);
        abort.abort();
        await reading;
      } else await sleep(1_000);
    }
  };

  /** One graphql-ws socket slot: a socket after another, each with ten subscriptions coming and going. */
  const wsSlot = async (size: number) => {
    while (running()) {
      const url = pickUrl().replace(/^http/, 'ws');
      const socket = { acked: 0, closed: null as string | null };
      const client = createClient({
        url,
        webSocketImpl: WebSocket,
        lazy: false,
        retryAttempts: 0,
        on: {
          connected: () => void (socket.acked = Date.now()),
          closed: (event) => {
            const { code, reason } = event as { code?: number; reason?: string };
            socket.closed = `socket closed ${code ?? ''} ${reason ?? ''}`.trim();
            if (code === 1011 || reason?.includes(INTERNAL)) serverError('graphql-ws close', socket.closed);
          },
        },
      });
      const socketUntil = Math.min(until, Date.now() + between(options.socketLifetimeMs));
      const subscription = async () => {
        while (Date.now() < socketUntil && socket.closed === null) {
          const subscriber = newSubscriber('ws', pickEvent(), url);
          let done = false;
          const unsubscribe = client.subscribe(
            { query: QUERY, variables: { eventId: subscriber.eventId } },
            {
              next: (payload) => onPayload(subscriber, payload, 'graphql-ws next'),
              error: (error) => {
                done = true;
                const text = Array.isArray(error)
                  ? JSON.stringify(error)
                  : error instanceof Error
                    ? error.message
                    : `close ${(error as { code?: number }).code ?? ''} ${(error as { reason?: string }).reason ?? ''}`;
                if (text.includes(INTERNAL)) serverError('graphql-ws error', text);
                subscriber.errors.push(text.slice(0, 300));
                ended(subscriber, `error: ${text.slice(0, 80)}`);
              },
              complete: () => {
                done = true;
                ended(subscriber, 'the gateway completed it');
              },
            },
          );
          // Accepted once its socket is acknowledged (the subscribe message follows at once).
          while (!socket.acked && socket.closed === null && !done) await sleep(50);
          subscriber.acceptedAt = socket.acked ? Math.max(socket.acked, Date.now()) : 0;
          if (!socket.acked) ended(subscriber, socket.closed ?? 'the socket was never acknowledged');
          const leaveAt = Math.min(socketUntil, Date.now() + between(options.lifetimeMs));
          while (Date.now() < leaveAt && !done && socket.closed === null)
            await sleep(Math.min(500, leaveAt - Date.now()));
          if (!done && socket.closed !== null) ended(subscriber, socket.closed);
          if (!done && subscriber.endedAt === null) subscriber.leftAt = await drain(subscriber);
          unsubscribe();
          if (socket.closed !== null) break;
        }
      };
      await Promise.all(Array.from({ length: size }, subscription));
      await client.dispose();
      if (socket.closed !== null && running()) await sleep(1_000);
    }
  };

  const sse = Math.ceil(options.subscribers / 2);
  const ws = options.subscribers - sse;
  const socketSizes = Array.from({ length: Math.ceil(ws / SUBSCRIPTIONS_PER_SOCKET) }, (_, i) =>
    Math.min(SUBSCRIPTIONS_PER_SOCKET, ws - i * SUBSCRIPTIONS_PER_SOCKET),
  );

  const bookings = async () => {
    while (running()) {
      const eventId = pickEvent();
      const sentAt = Date.now();
      try {
        const res = await fetch(`${options.emulatorUrl}/_emulator/bookings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ eventId }),
        });
        if (res.ok) {
          const { reservationNumber } = (await res.json()) as { reservationNumber: number };
          record.bookings.push({ eventId, number: reservationNumber, sentAt, answeredAt: Date.now() });
        } else record.bookingsRefused++;
      } catch {
        record.bookingsRefused++;
      }
      await sleep(options.bookEveryMs);
    }
  };

  let writeCount = 0;
  const writes = async () => {
    while (running()) {
      const attendeeId = `soak-${options.tag}-${++writeCount}`;
      const write: SoakWrite = { attendeeId, outcome: 'failed', detail: '' };
      record.writes.push(write);
      void (async () => {
        try {
          const res = await fetch(pickUrl(), {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({
              query: WRITE,
              variables: { input: { attendeeId, registrationEventId: `soak-${options.tag}`, lastName: 'Soak' } },
            }),
          });
          const text = await res.text();
          if (res.status >= 500 || text.includes(INTERNAL)) serverError(`upsertAttendee ${res.status}`, text);
          const body = JSON.parse(text) as {
            data?: { upsertAttendee?: { attendee?: { attendeeId?: string } } | null };
            errors?: { message: string; extensions?: { code?: string } }[];
          };
          if (body.data?.upsertAttendee?.attendee?.attendeeId === attendeeId && !body.errors)
            write.outcome = 'answered';
          else if (res.status < 500 && body.errors?.length) {
            write.outcome = 'refused';
            write.detail = `${body.errors[0]!.extensions?.code ?? ''}: ${body.errors[0]!.message}`;
          } else write.detail = `${res.status} ${text.slice(0, 200)}`;
        } catch (error) {
          write.detail = (error as Error).message;
        }
      })();
      await sleep(options.writeEveryMs);
    }
  };

  const revocations = async () => {
    for (await sleep(options.revokeEveryMs); running(); await sleep(options.revokeEveryMs)) {
      await control(options.emulatorUrl, 'revoke-tokens', {});
      record.revocations++;
    }
  };

  const minutes = async () => {
    for (let minute = 1; ; minute++) {
      const at = record.startedAt + minute * 60_000;
      while (Date.now() < Math.min(at, until)) await sleep(Math.min(1_000, Math.min(at, until) - Date.now()));
      if (Date.now() < at) return;
      await options.everyMinute?.(minute);
    }
  };

  const midway = async () => {
    if (!options.midway) return;
    await sleep(options.midway.atMs);
    if (running()) await options.midway.run();
  };

  const tables = async () => {
    const hotels = await hotelsWithRetry(options.urls[0]!);
    const seconds = Math.max(1, (until - Date.now()) / 1000);
    const perReplica = options.urls.map(
      (_, r) => Math.floor(options.users / options.urls.length) + (r < options.users % options.urls.length ? 1 : 0),
    );
    const figures = await Promise.all(
      options.urls.map((url, r) =>
        perReplica[r]! > 0
          ? simulateTables(url, hotels, perReplica[r]!, seconds, (status, text) => {
              if (status === NO_ANSWER) note(record.noAnswer, 'S7 query', text);
              else if (status >= 500 || text.includes(INTERNAL)) serverError(`S7 query ${status}`, text);
            })
          : null,
      ),
    );
    for (const f of figures) {
      if (!f) continue;
      record.operations += f.operations;
      record.operationOutcomes.ok += f.outcomes.ok;
      record.operationOutcomes.rateLimited += f.outcomes.rateLimited;
      record.operationOutcomes.errors += f.outcomes.errors;
      record.operationOutcomes.serverErrors += f.outcomes.serverErrors;
      record.operationOutcomes.stale += f.stale;
    }
  };

  await Promise.all([
    ...Array.from({ length: sse }, sseSlot),
    ...socketSizes.map((size) => wsSlot(size)),
    bookings(),
    writes(),
    revocations(),
    minutes(),
    midway(),
    tables(),
  ]);
  // The writes still in flight are answered (or time out) within the gateway's deadline.
  const inFlight = Date.now() + 30_000;
  while (record.writes.some((w) => w.outcome === 'failed' && !w.detail) && Date.now() < inFlight) await sleep(200);
  await control(options.emulatorUrl, 'faults', {});
  record.endedAt = Date.now();
  return record;
}

/** The hotels of each event, asked of the gateway (a fault may refuse the first try). */
async function hotelsWithRetry(url: string): Promise<Map<number, number[]>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await hotelsOf(url);
    } catch (error) {
      if (attempt >= 10) throw error;
      await sleep(1_000);
    }
  }
}

async function control(emulatorUrl: string, action: string, body: unknown): Promise<void> {
  const res = await fetch(`${emulatorUrl}/_emulator/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`/_emulator/${action} answered ${res.status}: ${await res.text()}`);
}

/** The emulator's request log since `since` (ms since epoch). */
export async function emulatorLog(emulatorUrl: string, since: number): Promise<LoggedCall[]> {
  const { requests } = (await (await fetch(`${emulatorUrl}/_emulator/requests`)).json()) as { requests: LoggedCall[] };
  return requests.filter((r) => Date.parse(r.at) >= since);
}

/** Holds what the clients saw against the emulator's log: nothing lost, nothing twice, every change told. */
export function checkSoak(record: SoakRecord, log: readonly LoggedCall[]): SoakVerdict {
  // An attendee push is applied when the service answered it 2xx with no fault injected.
  const applied = new Map<string, number>();
  for (const call of log) {
    if (call.endpoint !== 'postattendee' || call.fault !== null || call.status < 200 || call.status >= 300) continue;
    const id = String(call.params.attendeeId ?? '');
    applied.set(id, (applied.get(id) ?? 0) + 1);
  }
  let lost = 0;
  let twice = 0;
  let refusedButApplied = 0;
  for (const write of record.writes) {
    const times = applied.get(write.attendeeId) ?? 0;
    if (times > 1) twice++;
    if (write.outcome === 'answered' && times === 0) lost++;
    if (write.outcome === 'refused' && times > 0 && !write.detail.includes('may or may not have been applied'))
      refusedButApplied++;
  }
  const endedByGateway: Record<string, number> = {};
  let owed = 0;
  let missed = 0;
  const missedExamples: string[] = [];
  const missedWhere = { toldNobody: 0, otherReplicaOnly: 0, sameReplica: 0 };
  // Per booking, the replicas (their URLs) where some subscriber received it.
  const receivedAt = new Map<number, Set<string>>();
  for (const subscriber of record.subscribers)
    for (const number of subscriber.received) {
      let urls = receivedAt.get(number);
      if (!urls) receivedAt.set(number, (urls = new Set()));
      urls.add(subscriber.url);
    }
  for (const subscriber of record.subscribers) {
    if (subscriber.endReason !== null) {
      const reason = subscriber.endReason.replace(/\d{4,}/g, 'N');
      endedByGateway[reason] = (endedByGateway[reason] ?? 0) + 1;
    }
    for (const booking of owedTo(subscriber, record.bookings)) {
      owed++;
      if (subscriber.received.has(booking.number)) continue;
      missed++;
      const urls = receivedAt.get(booking.number);
      if (!urls) missedWhere.toldNobody++;
      else if (urls.has(subscriber.url)) missedWhere.sameReplica++;
      else missedWhere.otherReplicaOnly++;
      if (missedExamples.length < 10)
        missedExamples.push(
          `${subscriber.door} subscriber of event ${subscriber.eventId} at ${subscriber.url} accepted ${new Date(subscriber.acceptedAt).toISOString()}, ` +
            `${subscriber.leftAt ? `left ${new Date(subscriber.leftAt).toISOString()}` : `ended ${subscriber.endReason}`}: ` +
            `reservation ${booking.number} booked ${new Date(booking.sentAt).toISOString()} never came`,
        );
    }
  }
  const refusals: Record<string, number> = {};
  for (const write of record.writes)
    if (write.outcome === 'refused') {
      const code = write.detail.split(':')[0] || 'no code';
      refusals[code] = (refusals[code] ?? 0) + 1;
    }
  const answered = record.writes.filter((w) => w.outcome === 'answered').length;
  const refused = record.writes.filter((w) => w.outcome === 'refused').length;
  const unanswered = record.writes.length - answered - refused;
  return {
    subscribers: record.subscribers.length,
    endedByGateway,
    owed,
    missed,
    missedWhere,
    missedExamples,
    writes: record.writes.length,
    answered,
    refused,
    unanswered,
    lost,
    twice,
    refusals,
    refusedButApplied,
    serverErrors: record.serverErrors,
    noAnswer: record.noAnswer,
    ok:
      missed === 0 &&
      unanswered === 0 &&
      lost === 0 &&
      twice === 0 &&
      refusedButApplied === 0 &&
      record.serverErrors.length === 0 &&
      record.noAnswer.length === 0,
  };
}

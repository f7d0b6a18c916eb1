import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import type { Emulator } from '../../src/emulator/server.ts';
import type { TestGateway } from './gateway.ts';

/** One result of a subscription as the client receives it. */
export interface StreamResult {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

/** A client's subscription: what it received so far, in order. */
export interface Subscriber {
  received: StreamResult[];
  /** Resolves once `count` results arrived (or the stream ended: then with what came). */
  take(count: number): Promise<StreamResult[]>;
  /** Resolves when the server completed the stream. */
  completed: Promise<void>;
  close(): void;
}

const CHANGE_FIELDS = 'kind modifiedAt reservation { reservationNumber eventId status hotel { hotelId } groupCode }';

export const RESERVATION_CHANGED = `subscription Changes($eventId: Int!, $since: DateTime, $filter: ReservationChangeFilter) {
  reservationChanged(eventId: $eventId, since: $since, filter: $filter) { ${CHANGE_FIELDS} }
}`;

/** A collector that `take` can wait on: results arrive from the transport through `add`. */
function collector(close: () => void) {
  const received: StreamResult[] = [];
  const waiters = new Set<() => void>();
  let ended = false;
  let markCompleted!: () => void;
  const completed = new Promise<void>((resolve) => (markCompleted = resolve));
  const wake = () => waiters.forEach((w) => w());
  return {
    subscriber: {
      received,
      completed,
      close,
      take: (count: number) =>
        new Promise<StreamResult[]>((resolve) => {
          const check = () => {
            if (received.length < count && !ended) return;
            waiters.delete(check);
            resolve(received.slice(0, count));
          };
          waiters.add(check);
          check();
        }),
    } satisfies Subscriber,
    add(result: StreamResult) {
      received.push(result);
      wake();
    },
    end() {
      ended = true;
      markCompleted();
      wake();
    },
  };
}

/**
 * Subscribes over GraphQL over SSE (Yoga's transport, `Accept: text/event-stream`) through `fetch`
 * (yoga.fetch, or a real one). Resolves when the response's headers arrived.
 */
export async function subscribeSse(
  fetchFn: (url: string, init: RequestInit) => Promise<Response>,
  url: string,
  variables: Record<string, unknown>,
  headers: Record<string, string> = {},
  query = RESERVATION_CHANGED,
): Promise<Subscriber & { response: Response }> {
  const abort = new AbortController();
  const response = await fetchFn(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  const { subscriber, add, end } = collector(() => abort.abort());
  void (async () => {
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
        let boundary: number;
        while ((boundary = text.indexOf('\n\n')) >= 0) {
          const message = text.slice(0, boundary);
          text = text.slice(boundary + 2);
          const event = /^event: (.*)$/m.exec(message)?.[1];
          const data = message
            .split('\n')
            .filter((line) => line.startsWith('data:'))
            .map((line) => line.slice(5).trim())
            .join('\n');
          if (event === 'next' || (!event && data)) add(JSON.parse(data) as StreamResult);
          if (event === 'complete') return;
        }
      }
    } catch {
      // aborted by close()
    } finally {
      end();
    }
  })();
  return { ...subscriber, response };
}

/** A graphql-ws client of the gateway at `url` (ws://…/graphql). */
export function wsClient(url: string, connectionParams?: Record<string, unknown>): Client {
  return createClient({ url, webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: true });
}

/** Subscribes over graphql-ws. */
export function subscribeWs(
  client: Client,
  variables: Record<string, unknown>,
  query = RESERVATION_CHANGED,
): Subscriber {
  let dispose = () => {};
  const { subscriber, add, end } = collector(() => dispose());
  dispose = client.subscribe<Record<string, unknown>>(
    { query, variables },
    {
      next: (result) => add(result as StreamResult),
      error: (error) => {
        add({
          errors: Array.isArray(error) ? error : [{ message: String((error as { reason?: string }).reason ?? error) }],
        });
        end();
      },
      complete: () => end(),
    },
  );
  return subscriber;
}

/** Books through the emulator's bookings control (an attendee booking through a link). */
export async function book(
  emulator: Emulator,
  booking: Record<string, unknown>,
): Promise<{ reservationNumber: number; created: boolean }> {
  const res = await fetch(`${emulator.url}/_emulator/bookings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(booking),
  });
  if (res.status !== 200) throw new Error(`booking refused: ${res.status} ${await res.text()}`);
  return (await res.json()) as { reservationNumber: number; created: boolean };
}

/** Moves the emulator's clock (the service's clock: modification times) forward. */
export async function advanceClock(emulator: Emulator, ms: number): Promise<void> {
  await fetch(`${emulator.url}/_emulator/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ advanceMs: ms }),
  });
}

/**
 * Waits until the emulator has answered a read of the event's changes (a `getreservation` with
 * `modifiedAfterDate`, as the feed's polls are) logged at or after `fromEntry` (an index of its
 * log): a feed that starts reads the service as its first subscriber found it, its first page and
 * right after it the minute it came in; what changes after that read is told (issue 36).
 */
export async function feedHasRead(
  emulator: Emulator,
  eventId: number,
  fromEntry = 0,
  timeoutMs = 10_000,
): Promise<void> {
  await until(
    () =>
      emulator.state.log
        .slice(fromEntry)
        .some(
          (entry) =>
            entry.endpoint === 'getreservation' &&
            entry.params.eventId === String(eventId) &&
            'modifiedAfterDate' in entry.params &&
            entry.status === 200,
        ),
    timeoutMs,
  );
}

/** A test gateway listening on 127.0.0.1:0 for HTTP and graphql-ws (subscriptions need a real connection to end). */
export async function listen(
  t: TestGateway,
): Promise<{ url: string; wsUrl: string; openSockets(): number; close(): Promise<void> }> {
  const server = createServer(t.gateway.yoga);
  const sockets = t.gateway.acceptWebSockets(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    wsUrl: `ws://127.0.0.1:${port}/graphql`,
    openSockets: () => sockets.open(),
    async close() {
      await sockets.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Waits until `condition` holds, checking every 20 ms. Without `timeoutMs` the test's own timeout
 * bounds it; with one, it throws once that time has passed (a wait that says which wait failed).
 */
export async function until(condition: () => boolean, timeoutMs = Infinity): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`the condition was never reached in ${timeoutMs} ms`);
    await pause(20);
  }
}

export const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

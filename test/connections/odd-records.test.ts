import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import type { ReservationRecord } from '../../src/emulator/model.ts';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { createLogger } from '../../src/observability/logger.ts';

/**
 * A record the gateway cannot read (here: a reservation whose number the service left out) is
 * skipped without moving any cursor, and the operators learn of it from one log line that names
 * its position, never its content. Guards the fault where such a record shortened the page,
 * shifted every later cursor and ended the list early.
 */
let emulator: Emulator;
let gateway: Gateway;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, rateLimit: false });
  const logger = createLogger('info', {
    write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  gateway = createGateway({ ...loadConfig({ LOG_LEVEL: 'info' }), upstreamBaseUrl: emulator.url }, logger);
  // The third reservation of event 5002 loses its number upstream.
  // (The store's records are shared and frozen: a copy without the number takes its place.)
  const list = emulator.state.store.reservationsByEvent.get(5002)!;
  const { reservationNumber, ...numberless } = list[2]!;
  list[2] = numberless as ReservationRecord;
  emulator.state.store.reservationsByNumber.set(reservationNumber, numberless as ReservationRecord);
  emulator.state.markDirty();
});

afterAll(async () => {
  await gateway.close();
  await emulator.close();
});

async function window(first: number, after?: string) {
  const res = await gateway.yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: `query ($first: Int, $after: String) { event(eventId: 5002) { reservations(first: $first, after: $after) {
        pageInfo { hasNextPage endCursor } edges { cursor node { reservationNumber contact { email } } } } } }`,
      variables: { first, after },
    }),
  });
  const body = (await res.json()) as {
    data: {
      event: {
        reservations: {
          pageInfo: { hasNextPage: boolean; endCursor: string };
          edges: { cursor: string; node: { reservationNumber: number } }[];
        };
      };
    };
  };
  return body.data.event.reservations;
}

describe('a reservation without a number', () => {
  it('is skipped, the cursors around it keep their positions, and the list does not end early', async () => {
    const numbers = emulator.state.store.reservationsByEvent.get(5002)!.map((r) => r.reservationNumber);
    const head = await window(10);
    expect(head.edges.map((e) => e.node.reservationNumber)).toEqual([numbers[0], numbers[1], ...numbers.slice(3, 10)]);
    expect(head.pageInfo.hasNextPage).toBe(true);
    // The next window starts right after position 9, not one further on.
    const next = await window(3, head.pageInfo.endCursor);
    expect(next.edges.map((e) => e.node.reservationNumber)).toEqual(numbers.slice(10, 13));
  });

  it('is logged once per page read, by position, with nothing of the record in the line', async () => {
    const skipped = lines.filter((l) => l.component === 'resolvers');
    expect(skipped.length).toBeGreaterThan(0);
    expect(skipped[0]).toMatchObject({ level: 40, endpoint: 'getreservation', eventId: 5002, positions: [2] });
    const record = emulator.state.store.reservationsByEvent.get(5002)![2]! as unknown as {
      contact: { email: string; lastName: string };
    };
    const text = JSON.stringify(lines);
    expect(text).not.toContain(record.contact.email);
    expect(text).not.toContain('demo-key-1001');
  });
});

import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { createGateway } from '../../src/gateway.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { EventPageDocument, NodeLookupDocument, ReservationDetailDocument } from '../documents/generated.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { globalId } from '../helpers/global-id.ts';

describe('lookups and errors', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startGateway();
  });
  afterAll(() => t.close());

  it('a lookup of one missing thing is null, not an error', async () => {
    const res = await t.exec(
      '{ event(eventId: 6001) { name hotel(hotelId: 1) { name } } other: event(eventId: 5001) { hotel(hotelId: 1) { name } reservation(reservationNumber: 1) { status } } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ event: null, other: { hotel: null, reservation: null } });
  });

  it('resolves global ids of events, hotels and reservations, and null for unknown ones', async () => {
    const hotel = await t.exec(NodeLookupDocument, { id: globalId('Hotel:5001:203') });
    expect(hotel.data!.node).toMatchObject({ __typename: 'Hotel', hotelId: 203, partnerHotelId: 'PX-203' });
    const reservation = await t.exec(NodeLookupDocument, { id: globalId('Reservation:5001:700001') });
    expect(reservation.data!.node).toMatchObject({ __typename: 'Reservation', reservationNumber: 700_001 });
    expect((reservation.data!.node as { contact: { companyName: string } }).contact.companyName).toBeTruthy();
    const missing = await t.exec(NodeLookupDocument, { id: globalId('Reservation:5001:1') });
    expect(missing.data!.node).toBeNull();
  });

  it('answers a client’s mistakes with 4xx or coded errors, never 500', async () => {
    const cases = [
      '{ event(eventId: "x") { name } }',
      '{ event { name } }',
      '{ nope }',
      '{ event(eventId: 5001) { name ',
      '{ events(eventIds: [' + Array.from({ length: 101 }, (_, i) => i).join(',') + ']) { name } }',
    ];
    for (const query of cases) {
      const res = await t.exec(query);
      expect(res.status).toBeLessThan(500);
      expect(res.errors?.length).toBeGreaterThan(0);
      expect(res.errors![0]!.extensions?.code).not.toBe('INTERNAL_SERVER_ERROR');
    }
    const res = await t.gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":',
    });
    expect(res.status).toBe(400);
  });

  it('reports a service that is down as UPSTREAM_UNAVAILABLE', async () => {
    t.emulator.state.faults.set({
      rules: [
        {
          endpoint: 'getgroupcodes',
          latencyMs: 0,
          errorRate: 1,
          errorStatus: 503,
          resetRate: 0,
          malformedRate: 0,
          rateLimitRate: 0,
        },
      ],
    });
    try {
      const res = await t.exec('{ event(eventId: 5003) { name groupCodes { code } } }');
      expect(res.errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(res.errors?.[0]?.path).toEqual(['event', 'groupCodes']);
    } finally {
      t.emulator.state.faults.clear();
    }
  }, 30_000);
});

describe('RATE_LIMITED', () => {
  it('a call the budget cannot serve before its deadline fails with retryAfterSeconds', async () => {
    const t = await startGateway(
      { rateLimit: false },
      {
        UPSTREAM_RATE_LIMIT: '3',
        UPSTREAM_RATE_MARGIN: '0',
        UPSTREAM_RATE_WINDOW_MS: '30000',
        UPSTREAM_DEADLINE_MS: '500',
      },
    );
    try {
      const res = await t.exec(
        '{ a: event(eventId: 5001) { name } b: event(eventId: 5002) { name } c: event(eventId: 5003) { name } }',
      );
      const limited = res.errors?.find((e) => e.extensions?.code === 'RATE_LIMITED');
      expect(limited).toBeDefined();
      expect(limited!.extensions!.retryAfterSeconds).toBeGreaterThanOrEqual(25);
      expect(limited!.extensions!.retryAfterSeconds).toBeLessThanOrEqual(30);
      // authenticate and two events were served; the third waited out its deadline.
      expect(t.emulator.state.log).toHaveLength(3);
    } finally {
      await t.close();
    }
  });
});

describe('secrets and personal data', () => {
  let emulator: Emulator;
  beforeAll(async () => {
    emulator = await startEmulator({ port: 0, rateLimit: false });
  });
  afterAll(() => emulator.close());

  it('never puts a key or token in a response or a log line, and redacts personal data in logs', async () => {
    let logged = '';
    const sink = new Writable({ write: (chunk, _enc, done) => ((logged += chunk.toString()), done()) });
    const config = loadConfig({
      LOG_LEVEL: 'trace',
      UPSTREAM_BASE_URL: emulator.url,
      UPSTREAM_KEY: 'demo-key-1001',
      UPSTREAM_SYSTEM_IDENTIFIER: '1001',
    });
    const gateway = createGateway({ ...config, upstreamBaseUrl: emulator.url }, createLoggerTo(sink));
    const exec = async (query: string, variables?: object) =>
      (
        await gateway.yoga.fetch('http://yoga/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query, variables }),
        })
      ).text();
    const bodies = [
      await exec(
        '{ event(eventId: 5002) { name reservations(first: 3) { edges { node { contact { email firstName } } } } } }',
      ),
      await exec(
        'mutation { upsertAttendee(input: { attendeeId: "A", registrationEventId: "R", email: "grace@example.com", country: "Nowhere" }) { created } }',
      ),
    ];
    emulator.state.revokeTokens();
    emulator.state.variations = { errorWith200: 'error' };
    bodies.push(await exec('{ event(eventId: 4242) { name } }'));
    emulator.state.variations = {};
    const badConfig = loadConfig({
      LOG_LEVEL: 'trace',
      UPSTREAM_BASE_URL: emulator.url,
      UPSTREAM_KEY: 'very-secret-key-42',
      UPSTREAM_SYSTEM_IDENTIFIER: '1001',
    });
    const bad = createGateway({ ...badConfig, upstreamBaseUrl: emulator.url }, createLoggerTo(sink));
    bodies.push(
      await (
        await bad.yoga.fetch('http://yoga/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ event(eventId: 5001) { name } }' }),
        })
      ).text(),
    );
    await gateway.close();
    await bad.close();
    // Tokens are opaque: any 32-character base64url run would be one.
    for (const text of [...bodies, logged]) {
      expect(text).not.toContain('demo-key-1001');
      expect(text).not.toContain('very-secret-key-42');
      expect(text).not.toMatch(/[A-Za-z0-9_-]{32}/);
    }
    expect(bodies[3]).toContain('UPSTREAM_ERROR');
    expect(logged).not.toContain('grace@example.com');
  });
});

function createLoggerTo(stream: Writable) {
  return createLogger('trace', stream);
}

describe('reservation detail', () => {
  it('converts dates whatever format upstream used', async () => {
    const t = await startGateway();
    try {
      const res = await t.exec(ReservationDetailDocument, { eventId: 5002, reservationNumber: 760_001 });
      const r = res.data!.event!.reservation!;
      expect(r.arrivalDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(r.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:00\+00:00$/);
      expect((r.raw as { createdDate: string }).createdDate).toMatch(/ (am|pm)$/);
      const page = await t.exec(EventPageDocument);
      expect(page.data!.event!.startDate).toBe('2027-03-12T08:00:00-06:00');
    } finally {
      await t.close();
    }
  });
});

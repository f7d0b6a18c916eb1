import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateDemoData } from '../../src/emulator/seed.ts';
import { type Rest, startRest } from '../helpers/rest.ts';

let rest: Rest;
beforeAll(async () => {
  rest = await startRest({ rateLimit: false });
});
afterAll(() => rest.emulator.close());
beforeEach(() => rest.reset());

describe('demo data', () => {
  const start = Date.parse('2027-01-15T12:00:00Z');
  it('is the same byte for byte for the same seed, and differs for another', () => {
    const a = JSON.stringify(generateDemoData(7, start));
    expect(JSON.stringify(generateDemoData(7, start))).toBe(a);
    expect(JSON.stringify(generateDemoData(8, start))).not.toBe(a);
  });
  it('has the contract’s licensees, events and sizes', () => {
    const d = generateDemoData(1, start);
    expect(d.licensees.map((l) => [l.systemIdentifier, l.key, l.timeZone])).toEqual([
      ['1001', 'demo-key-1001', 'UTC'],
      ['2002', 'demo-key-2002', 'America/New_York'],
    ]);
    expect(d.events.map((e) => `${e.licensee}:${e.eventId}`)).toEqual([
      '1001:5001',
      '1001:5002',
      '1001:5003',
      '2002:6001',
      '2002:6002',
    ]);
    const of = (id: number) => d.reservations.filter((r) => r.eventId === id);
    expect(of(5001).length).toBeGreaterThan(25_000);
    expect(d.hotels.filter((h) => h.eventId === 5001).length).toBeGreaterThanOrEqual(12);
    expect(d.answers.filter((a) => a.eventId === 5001).length).toBeGreaterThanOrEqual(2500);
    expect(new Set(of(5001).map((r) => r.status))).toEqual(new Set(['new', 'accepted', 'cancelled', 'declined']));
    const past = d.events.filter((e) => e.endMs < start);
    const pastCutoff = d.events.filter((e) => e.cutOffMs < start && e.startMs > start);
    expect(past.length).toBeGreaterThan(0);
    expect(pastCutoff.length).toBeGreaterThan(0);
  });
});

describe('faults', () => {
  it('answers the configured status at the configured rate, on one endpoint only, the same sequence every time', async () => {
    await rest.token();
    const run = async () => {
      await rest.control('faults', { rules: [{ endpoint: 'getevent', errorRate: 0.5, errorStatus: 503 }] });
      const statuses = [];
      for (let i = 0; i < 20; i++) statuses.push((await rest.call('getevent', { eventId: 5001 })).status);
      return statuses;
    };
    const first = await run();
    expect(first.filter((s) => s === 503).length).toBeGreaterThan(3);
    expect(first.filter((s) => s === 200).length).toBeGreaterThan(3);
    expect(await run()).toEqual(first);
    expect((await rest.call('gethotels', { eventId: 5001 })).status).toBe(200);
    const log = await rest.requests();
    expect(log.filter((r) => r.fault === 'status').every((r) => r.status === 503)).toBe(true);
  });

  it('resets connections, sends malformed bodies, forces 429 and adds latency', async () => {
    await rest.token();
    await rest.control('faults', { rules: [{ resetRate: 1 }] });
    await expect(rest.call('getevent', { eventId: 5001 })).rejects.toThrow();
    await rest.control('faults', { rules: [{ malformedRate: 1 }] });
    const malformed = await rest.call('getevent', { eventId: 5001 });
    expect(malformed.status).toBe(200);
    expect(typeof malformed.body).toBe('string');
    await rest.control('faults', { rules: [{ rateLimitRate: 1 }] });
    const limited = await rest.call('getevent', { eventId: 5001 });
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '2']);
    await rest.control('faults', { rules: [{ latencyMs: 300 }] });
    const t = performance.now();
    expect((await rest.call('getevent', { eventId: 5001 })).status).toBe(200);
    expect(performance.now() - t).toBeGreaterThanOrEqual(290);
    const log = await rest.requests();
    expect(log.map((r) => r.fault)).toEqual([null, 'reset', 'malformed', '429', null]);
  });

  it('refuses a malformed fault configuration', async () => {
    const res = await rest.control('faults', { rules: [{ errorRate: 2 }] });
    expect(res.status).toBe(400);
  });
});

describe('variations', () => {
  it('reports errors with status 200 in each of the three bodies', async () => {
    for (const [form, expected] of [
      ['error', { error: { code: 'NOT_FOUND', message: 'event not found', field: 'eventId' } }],
      ['success-false', { success: false, message: 'event not found', code: 'NOT_FOUND' }],
      ['status-error', { status: 'error', message: 'event not found', code: 'NOT_FOUND' }],
    ] as const) {
      await rest.control('variations', { errorWith200: form });
      const res = await rest.call('getevent', { eventId: 1 });
      expect([res.status, res.body]).toEqual([200, expected]);
    }
  });

  it.each([
    [
      { status: 200, form: 'message' },
      { success: false, message: 'Invalid or expired token' },
    ],
    [
      { status: 400, form: 'message', message: 'Token is expired' },
      { success: false, message: 'Token is expired' },
    ],
    [
      { status: 401, form: 'message' },
      { success: false, message: 'Invalid or expired token' },
    ],
    [
      { status: 403, form: 'message' },
      { success: false, message: 'Invalid or expired token' },
    ],
    [{ status: 400, form: 'code' }, { error: { code: 'TOKEN_EXPIRED', message: 'Request refused' } }],
    [
      { status: 200, form: 'field' },
      { error: { code: 'INVALID_PARAMETER', message: 'Request refused', field: 'token' } },
    ],
    [{ status: 401, form: 'empty' }, ''],
  ] as const)('rejects tokens as %o', async (tokenRejection, body) => {
    await rest.control('variations', { tokenRejection });
    const res = await rest.post('getevent', { token: 'stale', eventId: 5001 });
    expect([res.status, res.body]).toEqual([tokenRejection.status, body]);
    // A valid token is still served.
    expect((await rest.call('getevent', { eventId: 5001 })).status).toBe(200);
  });

  it('with revokeAfterUses, revokes each token once it has served that many requests, in the form asked', async () => {
    await rest.control('variations', {
      tokenRejection: { status: 200, form: 'message', message: 'Token is expired', revokeAfterUses: 2 },
    });
    const token = await rest.token();
    const use = () => rest.post('getevent', { token, eventId: 5001 });
    expect((await use()).body.eventId).toBe(5001);
    expect((await use()).body.eventId).toBe(5001);
    expect([(await use()).body, (await use()).body]).toEqual(
      Array(2).fill({ success: false, message: 'Token is expired' }),
    );
    // A new token serves its own two.
    const fresh = (await rest.post('authenticate', { key: 'demo-key-1001', systemIdentifier: '1001' })).body.token;
    expect((await rest.post('getevent', { token: fresh, eventId: 5002 })).body.eventId).toBe(5002);
  });

  it('refuses a token rejection form it does not know', async () => {
    expect((await rest.control('variations', { tokenRejection: { status: 200, form: 'words' } })).status).toBe(400);
    expect((await rest.control('variations', { tokenRejection: { status: 500, form: 'code' } })).status).toBe(400);
    expect(
      (await rest.control('variations', { tokenRejection: { status: 200, form: 'code', revokeAfterUses: 0 } })).status,
    ).toBe(400);
  });

  it('quotes the value of the parameter an error names, never a token', async () => {
    await rest.control('variations', { echoValues: true });
    const link = await rest.call(
      'getgroupcodelink',
      { eventId: 5001, groupCode: 'token is expired', attendeeId: 'A-1', registrationEventId: 'R-1' },
      { version: 'v101' },
    );
    expect([link.status, link.body]).toEqual([
      404,
      { error: { code: 'NOT_FOUND', message: 'group code not found: "token is expired"', field: 'groupCode' } },
    ]);
    expect((await rest.call('getevent', { eventId: 1 })).body).toEqual({
      error: { code: 'NOT_FOUND', message: 'event not found: "1"', field: 'eventId' },
    });
    const missing = await rest.post('getevent', { token: '', eventId: 5001 });
    expect(missing.body).toEqual({
      error: { code: 'MISSING_PARAMETER', message: 'token is required', field: 'token' },
    });
  });

  it('wraps arrays, sends numbers as strings, adds unknown properties and bare page counts', async () => {
    await rest.control('variations', {
      wrappedArrays: 'named',
      numericStrings: true,
      extraProperties: true,
      bareIntegerPageCount: true,
    });
    const hotels = (await rest.call('gethotels', { eventId: 5001 })).body;
    expect(Object.keys(hotels)).toEqual(['hotels']);
    expect(hotels.hotels[0].hotelId).toMatch(/^\d+$/);
    expect(hotels.hotels[0].legacyRef).toBe('LR-0');
    expect((await rest.call('getreservationpagecount', { eventId: 5002 })).body).toBe('1');
    expect((await rest.call('getreservationpagecount', { eventId: 5002, reservationNumber: 1 })).body).toBe('1');
    await rest.control('variations', { wrappedArrays: 'data', numericStrings: false, extraProperties: false });
    expect(Object.keys((await rest.call('getgroupcodes', { eventId: 5001 })).body)).toEqual(['data']);
    expect((await rest.call('getreservationpagecount', { eventId: 5001 })).body).toBe(26);
  });

  it('sends error bodies that are not JSON', async () => {
    await rest.control('variations', { nonJsonErrors: 'html' });
    const html = await rest.call('getevent', { eventId: 1 });
    expect(html.status).toBe(404);
    expect(html.body).toContain('<html>');
    await rest.control('variations', { nonJsonErrors: 'empty' });
    expect((await rest.call('getevent', { eventId: 1 })).body).toBe('');
  });
});

describe('bookings', () => {
  it('creates a reservation with answers that the service then reports, and moves the pickup', async () => {
    const hotel = rest.emulator.state.store.hotelsByEvent.get(5002)![0]!;
    const pickupBefore = (await rest.call('getpickup', { eventId: 5002 })).body;
    const booked = await rest.control('bookings', {
      eventId: 5002,
      hotelId: hotel.hotelId,
      arrivalDate: '2027-02-13',
      departureDate: '2027-02-15',
      attendeeId: 'BOOK-1',
      registrationEventId: 'REG-X',
      contact: { firstName: 'Grace', lastName: 'Hopper' },
      answers: [{ questionId: 7, answer: '1' }],
    });
    expect(booked).toMatchObject({ status: 200, created: true });
    const res = (await rest.call('getreservation', { eventId: 5002, attendeeId: 'BOOK-1' })).body;
    expect(res).toHaveLength(1);
    expect(res[0]).toMatchObject({
      reservationNumber: booked.reservationNumber,
      status: 'new',
      arrivalDate: '13-Feb-2027',
      departureDate: '15-Feb-2027',
      contact: { firstName: 'Grace' },
    });
    const after = (await rest.call('getpickup', { eventId: 5002 })).body;
    const total = (rows: any[]) => rows.reduce((n, r) => n + r.pickup, 0);
    expect(total(after) - total(pickupBefore)).toBe(2);
    const answers = (await rest.call('getattendeeanswers', { eventId: 5002 })).body;
    expect(answers.find((a: any) => a.reservationNumber === booked.reservationNumber)).toMatchObject({
      questionId: 7,
      answer: '1',
      attendeeId: 'BOOK-1',
    });
  });

  it('changes a reservation and moves its modification time', async () => {
    const r = rest.emulator.state.store.reservationsByEvent.get(5002)![0]!;
    await rest.control('clock', { advanceMs: 3_600_000 });
    const res = await rest.control('bookings', {
      eventId: 5002,
      reservationNumber: r.reservationNumber,
      status: 'cancelled',
    });
    expect(res.created).toBe(false);
    const after = (await rest.call('getreservation', { eventId: 5002, reservationNumber: r.reservationNumber }))
      .body[0];
    expect(after.status).toBe('cancelled');
    expect(after.rooms[0].status).toBe('cancelled');
    const start = Date.parse('2027-01-15T12:00:00Z');
    expect(rest.emulator.state.store.reservationsByNumber.get(r.reservationNumber)!.modifiedMs).toBeGreaterThanOrEqual(
      start + 3_600_000,
    );
  });

  it('refuses an unknown event, reservation or malformed booking', async () => {
    expect((await rest.control('bookings', { eventId: 1 })).status).toBe(404);
    expect((await rest.control('bookings', { eventId: 5002, reservationNumber: 1 })).status).toBe(404);
    expect((await rest.control('bookings', { eventId: 5002, arrivalDate: 'soon' })).status).toBe(400);
  });
});

describe('reset', () => {
  it('restores data, clock, log, faults and variations', async () => {
    await rest.call('postcustomfield', { name: 'Temp' });
    await rest.control('clock', { advanceMs: 86_400_000 });
    await rest.control('variations', { numericStrings: true });
    await rest.control('faults', { rules: [{ endpoint: 'getevent', errorRate: 1 }] });
    await rest.reset();
    expect(await rest.requests()).toEqual([]);
    // The clock runs on from its start in real time.
    const now = Date.parse((await rest.control('clock')).now);
    expect(now - Date.parse('2027-01-15T12:00:00Z')).toBeLessThan(5_000);
    expect((await rest.call('getevent', { eventId: 5001 })).body.eventId).toBe(5001);
    expect((await rest.call('getcustomfields')).body.map((f: any) => f.name)).not.toContain('Temp');
  });
});

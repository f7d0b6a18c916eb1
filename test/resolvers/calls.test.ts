import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RESERVATION_DETAIL_FLAGS } from '../../src/upstream/endpoints.ts';
import {
  EventHotelsDocument,
  EventTwiceMoreDocument,
  EverythingDocument,
  ReservationCountDocument,
  ReservationNumbersDocument,
  ReservationsWithHotelsDocument,
  ReservationWindowDocument,
} from '../documents/generated.ts';
import { readyToCount, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { globalId } from '../helpers/global-id.ts';

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway();
});
afterAll(() => t.close());
beforeEach(() => readyToCount(t));

describe('upstream calls per operation (from the emulator’s request log)', () => {
  it('the same event asked three times under aliases: 1 getevent', async () => {
    const res = await t.exec(EventTwiceMoreDocument, { eventId: 5001 });
    expect(res.errors).toBeUndefined();
    expect(res.data!.a!.name).toBeTruthy();
    expect(t.calls().map((c) => c.endpoint)).toEqual(['getevent']);
  });

  it('an event with hotels, hotel(a) and hotel(b): 1 getevent, 1 gethotels', async () => {
    const res = await t.exec(EventHotelsDocument, { eventId: 5001, a: 201, b: 202 });
    expect(res.errors).toBeUndefined();
    expect(res.data!.event!.hotels.length).toBeGreaterThan(10);
    expect(res.data!.event!.first!.name).toBe(res.data!.event!.hotels.find((h) => h.hotelId === 201)!.name);
    expect(res.data!.event!.second!.partnerHotelId).toBe('PX-202');
    expect(
      t
        .calls()
        .map((c) => c.endpoint)
        .sort(),
    ).toEqual(['getevent', 'gethotels']);
  });

  it('reservations(first: 2500) with hotel { name } on each node: 3 getreservation, no gethotels (the reservation names its hotel)', async () => {
    const res = await t.exec(ReservationsWithHotelsDocument, { eventId: 5001, first: 2500 });
    expect(res.errors).toBeUndefined();
    const edges = res.data!.event!.reservations.edges;
    expect(edges).toHaveLength(2500);
    const { store } = t.emulator.state;
    const hotelNames = new Map(store.hotelsByEvent.get(5001)!.map((h) => [h.hotelId, h.name]));
    const reservations = new Map(store.reservationsByEvent.get(5001)!.map((r) => [r.reservationNumber, r]));
    // The names are the event's hotels' names, as gethotels would have answered them.
    for (const { node } of edges)
      expect(node.hotel?.name).toBe(hotelNames.get(reservations.get(Number(node.reservationNumber))!.hotelId));
    const calls = t.calls();
    expect(calls.filter((c) => c.endpoint === 'getreservation').map((c) => c.params.page)).toEqual(
      expect.arrayContaining(['1', '2', '3']),
    );
    expect(calls.filter((c) => c.endpoint === 'getreservation')).toHaveLength(3);
    expect(calls.filter((c) => c.endpoint === 'gethotels')).toHaveLength(0);
  });

  it('a reservation’s hotel with more than its name and ids (its city): 1 gethotels for the page', async () => {
    const res = await t.exec<
      { event: { reservations: { edges: { node: { hotel: { hotelId: number; name: string; city: string } } }[] } } },
      Record<string, never>
    >(
      '{ event(eventId: 5001) { reservations(first: 100) { edges { node { hotel { hotelId name ...Place } } } } } } fragment Place on Hotel { city }',
    );
    expect(res.errors).toBeUndefined();
    const cities = new Map(t.emulator.state.store.hotelsByEvent.get(5001)!.map((h) => [h.hotelId, h.city]));
    for (const { node } of res.data!.event.reservations.edges)
      expect(node.hotel.city).toBe(cities.get(node.hotel.hotelId));
    expect(t.calls().filter((c) => c.endpoint === 'gethotels')).toHaveLength(1);
  });

  it('reservations(first: 10) { totalCount }: at most 3 calls', async () => {
    const res = await t.exec(ReservationCountDocument, { eventId: 5001, first: 10 });
    expect(res.errors).toBeUndefined();
    expect(res.data!.event!.reservations.totalCount).toBe(t.emulator.state.store.reservationsByEvent.get(5001)!.length);
    const upstream = t.calls().filter((c) => c.endpoint !== 'getevent');
    expect(upstream.length).toBeLessThanOrEqual(3);
    // Only the count is read: the page count and the last page; no window is fetched.
    expect(upstream.map((c) => `${c.endpoint} ${c.params.page ?? ''}`).sort()).toEqual([
      'getreservation 26',
      'getreservationpagecount ',
    ]);
  });

  it('reservations(first: 10) with totalCount and edges: page count, last page, first page', async () => {
    const res = await t.exec(ReservationWindowDocument, { eventId: 5001, first: 10 });
    expect(res.data!.event!.reservations.edges).toHaveLength(10);
    const upstream = t.calls().filter((c) => c.endpoint !== 'getevent');
    expect(upstream.map((c) => `${c.endpoint} ${c.params.page ?? ''}`).sort()).toEqual([
      'getreservation 1',
      'getreservation 26',
      'getreservationpagecount ',
    ]);
  });

  it('a filtered list that fits one page: totalCount costs no call beyond that page (nor a getevent)', async () => {
    const res = await t.exec(ReservationWindowDocument, {
      eventId: 5001,
      first: 10,
      filter: { reservationStatus: 'DECLINED', hotelId: 203 },
    });
    const expected = t.emulator.state.store.reservationsByEvent
      .get(5001)!
      .filter((r) => r.status === 'declined' && r.hotelId === 203).length;
    expect(expected).toBeLessThan(1000);
    expect(res.data!.event!.reservations.totalCount).toBe(expected);
    expect(
      t
        .calls()
        .map((c) => c.endpoint)
        .sort(),
    ).toEqual(['getreservation']);
  });

  it('reservations selecting only reservationNumber and status: no detail flag is sent', async () => {
    const res = await t.exec(ReservationNumbersDocument, { eventId: 5001, first: 20 });
    expect(res.errors).toBeUndefined();
    const [call] = t.calls().filter((c) => c.endpoint === 'getreservation');
    for (const flag of RESERVATION_DETAIL_FLAGS) {
      expect(call!.params[flag]).toBeUndefined();
    }
  });

  it('every field of the contract queried at once for one event: no call twice', async () => {
    const store = t.emulator.state.store;
    const code = store.groupCodesByEvent.get(5001)![0]!.groupCode;
    const nodeId = globalId('Event:5001');
    const res = await t.exec(EverythingDocument, {
      eventId: 5001,
      hotelId: 202,
      reservationNumber: 700_004,
      groupCode: code,
      nodeId,
    });
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    const e = res.data!.event!;
    expect(e.reservations.edges).toHaveLength(10);
    expect(e.attendeeAnswers.edges).toHaveLength(10);
    expect(e.reservation!.contact!.companyName).toBeTruthy();
    expect(res.data!.groupCodeLink).toContain(code);
    const seen = new Map<string, number>();
    for (const c of t.calls({ withAuthenticate: true })) {
      const key = `${c.endpoint} ${JSON.stringify(Object.entries(c.params).sort())}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    const twice = [...seen].filter(([, n]) => n > 1);
    expect(twice).toEqual([]);
    // Detail flags follow the selection: here contact address fields, subBlock and customFieldValues.
    const page = t
      .calls()
      .find(
        (c) =>
          c.endpoint === 'getreservation' &&
          c.params.page === '1' &&
          !c.params.reservationNumber &&
          !c.params.attendeeId,
      )!;
    expect(page.params).toMatchObject({ fullContactInfo: 'true', detailedSubBlockInfo: 'true', customField: 'true' });
    expect(page.params.detailedHotelInfo).toBeUndefined();
  });

  it('an event’s first reservations with their hotel names: 1 getreservation, no getevent nor gethotels', async () => {
    const res = await t.exec<
      { event: { reservations: { edges: { node: { reservationNumber: string; hotel: { name: string } } }[] } } },
      Record<string, never>
    >('{ event(eventId: 5001) { reservations(first: 100) { edges { node { reservationNumber hotel { name } } } } } }');
    expect(res.errors).toBeUndefined();
    expect(res.data!.event.reservations.edges).toHaveLength(100);
    expect(res.data!.event.reservations.edges.every((e) => e.node.hotel.name)).toBe(true);
    expect(t.calls().map((c) => `${c.endpoint} ${c.params.page ?? ''}`)).toEqual(['getreservation 1']);
  });

  it('an unknown event’s reservations: the event is null (getevent decides, the page being empty)', async () => {
    const res = await t.exec(
      '{ event(eventId: 987654) { eventId reservations(first: 10) { edges { node { reservationNumber } } } } }',
    );
    expect(res.data).toEqual({ event: null });
    expect(t.calls().map((c) => c.endpoint)).toContain('getevent');
  });

  it('an event whose filtered window is empty is an event with no edges, not null (getevent decides)', async () => {
    const res = await t.exec(
      '{ event(eventId: 5001) { eventId reservations(first: 10, filter: { reservationNumber: 1 }) { edges { node { reservationNumber } } } } }',
    );
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ event: { eventId: 5001, reservations: { edges: [] } } });
    expect(
      t
        .calls()
        .map((c) => c.endpoint)
        .sort(),
    ).toEqual(['getevent', 'getreservation']);
  });
});

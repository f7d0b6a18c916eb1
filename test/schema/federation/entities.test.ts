import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readyToCount, startGateway, type TestGateway } from '../../helpers/gateway.ts';

/**
 * `_entities` as the federation gateway sends it: references from other subgraphs, resolved through
 * the request's calls (resolvers/request-calls.ts) with the same thrift as plain queries (counted in the emulator's log).
 */

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway();
});
afterAll(() => t.close());
beforeEach(() => readyToCount(t));

const ENTITIES = `query ($representations: [_Any!]!) {
  _entities(representations: $representations) {
    __typename
    ... on Event { eventId name }
    ... on Hotel { eventId hotelId name }
    ... on Reservation { eventId reservationNumber status }
    ... on Attendee { attendeeId registrationEventId }
    ... on EventQuestion { eventId questionId question }
    ... on CustomField { customFieldId name }
  }
}`;

type Entity = Record<string, unknown> | null;
const entities = (representations: object[]) =>
  t.exec<{ _entities: Entity[] }, { representations: object[] }>(ENTITIES, { representations });
const reservations = (eventId: number, first: number, count: number) =>
  Array.from({ length: count }, (_, i) => ({ __typename: 'Reservation', eventId, reservationNumber: first + i }));

/** The same reservations asked by a plain query, one `reservation(reservationNumber:)` each: what _entities must answer. */
async function plainNumbers(eventId: number, first: number, count: number): Promise<(number | null)[]> {
  const fields = Array.from(
    { length: count },
    (_, i) => `r${i}: reservation(reservationNumber: ${first + i}) { reservationNumber }`,
  ).join(' ');
  const res = await t.exec<{ event: Record<string, { reservationNumber: number } | null> }, never>(
    `{ event(eventId: ${eventId}) { ${fields} } }`,
  );
  await readyToCount(t);
  return Array.from({ length: count }, (_, i) => res.data!.event[`r${i}`]?.reservationNumber ?? null);
}

describe('_entities', () => {
  it('resolves 500 Hotel references of one event with one gethotels', async () => {
    const refs = Array.from({ length: 500 }, (_, i) => ({
      __typename: 'Hotel',
      eventId: 5001,
      hotelId: 201 + (i % 14),
    }));
    const res = await entities(refs);
    expect(res.errors).toBeUndefined();
    expect(res.data?._entities).toHaveLength(500);
    expect(res.data?._entities[0]).toMatchObject({ __typename: 'Hotel', eventId: 5001, hotelId: 201 });
    expect(t.calls().map((c) => c.endpoint)).toEqual(['gethotels']);
  });

  it('resolves single, composite and several keys in one call, in order, unknown references as null', async () => {
    const res = await entities([
      { __typename: 'Event', eventId: 5001 },
      { __typename: 'Hotel', eventId: 5001, hotelId: 202 },
      { __typename: 'Event', eventId: 4999 },
      { __typename: 'Hotel', eventId: 5001, hotelId: 99 },
      { __typename: 'Reservation', eventId: 5002, reservationNumber: 760_001 },
      { __typename: 'Reservation', eventId: 5002, reservationNumber: 1 },
      { __typename: 'CustomField', customFieldId: 1 },
      { __typename: 'EventQuestion', eventId: 0, questionId: 1 },
    ]);
    expect(res.errors).toBeUndefined();
    const list = res.data!._entities;
    expect(list[0]).toMatchObject({ __typename: 'Event', eventId: 5001 });
    expect(list[1]).toMatchObject({ __typename: 'Hotel', eventId: 5001, hotelId: 202 });
    expect(list[2]).toBeNull();
    expect(list[3]).toBeNull();
    expect(list[4]).toMatchObject({ __typename: 'Reservation', eventId: 5002, reservationNumber: 760_001 });
    expect(list[5]).toBeNull();
    expect(list[6]).toMatchObject({ __typename: 'CustomField', customFieldId: 1, name: 'Badge type' });
    expect(list[7]).toMatchObject({ __typename: 'EventQuestion', eventId: 0, questionId: 1 });
  });

  it('resolves Attendee references from their key alone, without an upstream call', async () => {
    const res = await entities([{ __typename: 'Attendee', attendeeId: 'A-1001', registrationEventId: 'R-1' }]);
    expect(res.data?._entities).toEqual([{ __typename: 'Attendee', attendeeId: 'A-1001', registrationEventId: 'R-1' }]);
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  });

  it('looks a few Reservation references up one by one', async () => {
    const res = await entities(reservations(5003, 770_001, 2));
    expect(res.data?._entities.map((r) => r?.reservationNumber)).toEqual([770_001, 770_002]);
    expect(t.calls().map((c) => c.endpoint)).toEqual(['getreservation', 'getreservation']);
  });

  it('reads many Reservation references of one event from its pages when they are fewer calls', async () => {
    // 5003 holds 1001 reservations: the page count and 2 pages serve 10 references.
    const expected = await plainNumbers(5003, 770_995, 10);
    const res = await entities(reservations(5003, 770_995, 10));
    expect(res.data?._entities.map((r) => r?.reservationNumber ?? null)).toEqual(expected);
    const endpoints = t.calls().map((c) => c.endpoint);
    expect(endpoints.filter((e) => e === 'getreservationpagecount')).toHaveLength(1);
    expect(endpoints.filter((e) => e === 'getreservation')).toHaveLength(2);
  });

  it('looks references up one by one when the event has more pages than references', async () => {
    // 5001 has 26 pages: 10 lookups beat reading them.
    const expected = await plainNumbers(5001, 700_001, 10);
    const res = await entities(reservations(5001, 700_001, 10));
    expect(res.data?._entities.map((r) => r?.reservationNumber ?? null)).toEqual(expected);
    const endpoints = t.calls().map((c) => c.endpoint);
    expect(endpoints.filter((e) => e === 'getreservation')).toHaveLength(10);
    expect(endpoints.filter((e) => e === 'getreservationpagecount')).toHaveLength(1);
  });

  it.each([
    [{ __typename: 'Hotel', eventId: 5001 }, 'hotelId'],
    [{ __typename: 'Event', eventId: 'five' }, 'eventId'],
    [{ __typename: 'Attendee', attendeeId: 'A-1' }, 'registrationEventId'],
    [{ __typename: 'Registration', id: '1' }, 'Registration'],
    // Review fault: these names were read from Object.prototype and answered INTERNAL_SERVER_ERROR.
    [{ __typename: 'constructor', id: '1' }, 'constructor'],
    [{ __typename: 'toString' }, 'toString'],
    [{ __typename: '__proto__' }, '__proto__'],
    [{ __typename: 'hasOwnProperty', eventId: 1 }, 'hasOwnProperty'],
  ])('refuses a reference without its key (%j), naming the field, before any upstream call', async (ref, field) => {
    const res = await entities([{ __typename: 'Event', eventId: 5001 }, ref]);
    expect(res.status).toBe(200);
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.message).toContain('representations[1]');
    expect(res.errors?.[0]?.message).toContain(field);
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  });
});

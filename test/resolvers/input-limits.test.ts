import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * One home for each input limit: the endpoint table. Filters the gateway applies itself (hotels)
 * and filters sent upstream (reservations) are held to its rules, reported at the filter's path.
 */
let t: TestGateway;
beforeAll(async () => {
  t = await startGateway();
});
afterAll(() => t.close());

describe('filter limits come from the endpoint table, named by the filter path', () => {
  it.each([
    [
      'hotels',
      `{ event(eventId: 5001) { hotels(filter: { city: "${'c'.repeat(256)}" }) { hotelId } } }`,
      'filter.city',
    ],
    [
      'reservations',
      `{ event(eventId: 5001) { reservations(first: 1, filter: { label1: "${'l'.repeat(256)}" }) { totalCount } } }`,
      'filter.label1',
    ],
  ])('%s', async (_name, query, field) => {
    t.clearLog();
    const res = await t.exec(query);
    const error = res.errors?.[0];
    expect(error?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
    expect(error?.message).toBe(`${field}: must be at most 255 characters`);
    expect(t.calls().filter((c) => c.endpoint !== 'getevent')).toEqual([]);
  });
});

describe('stays in the shopping view', () => {
  // Fault: no rule refused a stay over 366 nights, so 1000-01-01 → 9999-12-31 was sent upstream.
  it.each([
    ['millennia', '1000-01-01', '9999-12-31'],
    ['367 nights', '2027-01-01', '2028-01-03'],
  ])(
    'a stay of %s is refused with BAD_USER_INPUT naming checkOutDate, before any upstream call',
    async (_name, checkIn, checkOut) => {
      t.clearLog();
      const res = await t.exec(
        `{ event(eventId: 5001) { shoppingViewHotels(checkInDate: "${checkIn}", checkOutDate: "${checkOut}") { name } } }`,
      );
      const error = res.errors?.[0];
      expect(error?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'checkOutDate' });
      expect(error?.message).toBe('checkOutDate: must be at most 366 nights after checkInDate');
      expect(t.calls().filter((c) => c.endpoint === 'getshoppingviewhotels')).toEqual([]);
    },
  );

  it('a stay of 366 nights is sent', async () => {
    t.clearLog();
    const res = await t.exec(
      '{ event(eventId: 5001) { shoppingViewHotels(checkInDate: "2027-01-01", checkOutDate: "2028-01-02") { name } } }',
    );
    expect(res.errors).toBeUndefined();
    expect(t.calls().filter((c) => c.endpoint === 'getshoppingviewhotels')).toHaveLength(1);
  });
});

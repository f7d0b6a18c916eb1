import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readyToCount, startGateway, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway();
});
afterAll(() => t.close());
beforeEach(() => readyToCount(t));

// Fault: years outside 1000–9999 reached the service in a short form (`0099-12-31` left as
// `31-Dec-99`, `0999-06-01T00:00:00Z` as `01-Jun-999 12:00 am`), which it reads as another year.
describe('Date and DateTime refuse years outside 1000–9999 before any call', () => {
  it.each(['0099-12-31', '0999-06-01', '0000-01-01'])('Date %s (literal and variable)', async (date) => {
    const literal = await t.exec(
      `{ event(eventId: 5001) { shoppingViewHotels(checkInDate: "${date}", checkOutDate: "2027-01-02") { name } } }`,
    );
    const variable = await t.exec(
      'query ($d: Date) { event(eventId: 5001) { shoppingViewHotels(checkInDate: $d, checkOutDate: "2027-01-02") { name } } }',
      { d: date },
    );
    for (const res of [literal, variable]) {
      expect(res.status).toBeLessThan(500);
      expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(res.errors?.[0]?.message).toContain(`years 1000 to 9999; got "${date}"`);
    }
    expect(t.calls()).toEqual([]);
  });

  it.each(['0999-06-01T00:00:00Z', '0099-12-31T23:00:00Z', '1000-01-01T00:30:00+01:00'])(
    'DateTime %s',
    async (instant) => {
      const res = await t.exec(
        'query ($at: DateTime) { event(eventId: 5001) { reservations(first: 1, filter: { modifiedAfter: $at }) { totalCount } } }',
        { at: instant },
      );
      expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
      expect(res.errors?.[0]?.message).toContain(`years 1000 to 9999; got "${instant}"`);
      expect(t.calls()).toEqual([]);
    },
  );

  it('the first and last years still pass', async () => {
    const res = await t.exec(
      'query ($at: DateTime) { event(eventId: 5001) { reservations(first: 1, filter: { modifiedAfter: $at }) { totalCount } } }',
      { at: '1000-01-01T00:00:00Z' },
    );
    expect(res.errors).toBeUndefined();
    const late = await t.exec(
      '{ event(eventId: 5001) { shoppingViewHotels(checkInDate: "9999-12-30", checkOutDate: "9999-12-31") { name } } }',
    );
    expect(late.errors).toBeUndefined();
  });
});

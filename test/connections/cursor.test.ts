import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../src/connections/cursor.ts';

// Fault: a cursor held only an offset and a hash of the filter, not whose list it walked, so a
// cursor made for licensee 1001 was taken by a gateway acting for 2002 over an equal filter.
describe('cursors bound to their licensee', () => {
  const OF_1001 = { key: 'reservations-of-5001', licensee: '1001' };
  const OF_2002 = { key: 'reservations-of-5001', licensee: '2002' };

  it('are taken back by the licensee they were made for', () => {
    expect(decodeCursor(encodeCursor(OF_1001, 41, [700_042]), OF_1001, 'after')).toEqual({
      offset: 41,
      order: [700_042],
    });
  });

  it('are refused for another licensee, naming the argument, even over the same list', () => {
    expect(() => decodeCursor(encodeCursor(OF_1001, 41, [700_042]), OF_2002, 'after')).toThrow(
      'after: the cursor was not made for this licensee',
    );
    expect(() => decodeCursor(encodeCursor(OF_2002, 3), OF_1001, 'before')).toThrow(
      'before: the cursor was not made for this licensee',
    );
  });

  it('are refused when made before cursors carried the licensee', () => {
    const old = Buffer.from(JSON.stringify({ o: 4, k: OF_1001.key, n: [5] })).toString('base64url');
    expect(() => decodeCursor(old, OF_1001, 'after')).toThrow('after: the cursor was not made for this licensee');
  });
});

import { describe, expect, it } from 'vitest';
import type { GatewayContext } from '../../src/resolvers/context.ts';
import { listReservations } from '../../src/resolvers/reservation.ts';
import { LazyList } from '../../src/upstream/lazy-list.ts';

describe('a reservation without a readable number', () => {
  it('is reported to the context’s log once, by position, without the record’s personal data', async () => {
    const raw = [
      { reservationNumber: 700_001, rooms: [] },
      { contact: { email: 'someone@example.com' }, rooms: [] },
      { reservationNumber: 700_003, rooms: [] },
    ];
    const page = LazyList.of(raw, (value) => {
      const record = value as { reservationNumber?: number };
      return typeof record.reservationNumber === 'number'
        ? { ...record, reservationNumber: record.reservationNumber, rooms: [], raw: value }
        : null;
    });
    const logged: [object, string][] = [];
    const ctx = {
      account: { systemIdentifier: '1001', key: 'unused', timeZone: 'UTC' },
      calls: { read: async () => page, send: async () => page },
      log: { warn: (details: object, message: string) => logged.push([details, message]) },
    } as unknown as GatewayContext;

    const connection = listReservations(ctx, 5001, null, {}, { first: 10 });
    const edges = await connection.edges;
    expect(edges.map((e) => e.node.reservationNumber)).toEqual([700_001, 700_003]);
    // A second window of the same request (an alias) reads the same page: no second report.
    expect(
      (await listReservations(ctx, 5001, null, {}, { first: 2 }).edges).map((e) => e.node.reservationNumber),
    ).toEqual([700_001]);
    expect(logged).toEqual([
      [{ endpoint: 'getreservation', eventId: 5001, positions: [1] }, 'reservations without a readable number skipped'],
    ]);
  });
});

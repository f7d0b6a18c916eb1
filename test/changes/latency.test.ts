import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { book, listen, subscribeSse, until } from '../helpers/subscriptions.ts';

// The bound: with CHANGES_POLL_INTERVAL_MS=1000 a booking reaches an SSE subscriber in under 3 s.
let t: TestGateway;
let server: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  t = await startGateway({ rateLimit: false }, { CHANGES_POLL_INTERVAL_MS: '1000' });
  server = await listen(t);
});
afterAll(async () => {
  await server.close();
  await t.close();
});

it('a booking reaches an SSE subscriber in under 3 s with CHANGES_POLL_INTERVAL_MS=1000', async () => {
  const s = await subscribeSse(fetch, server.url, { eventId: 5002 });
  await until(() => (t.gateway.changeFeeds.active()[0]?.polls ?? 0) > 0);
  const bookedAt = performance.now();
  const { reservationNumber } = await book(t.emulator, { eventId: 5002 });
  const [change] = await s.take(1);
  const elapsedMs = performance.now() - bookedAt;
  expect(
    (change?.data?.reservationChanged as { reservation: { reservationNumber: number } }).reservation.reservationNumber,
  ).toBe(reservationNumber);
  expect(elapsedMs).toBeLessThan(3000);
  s.close();
});

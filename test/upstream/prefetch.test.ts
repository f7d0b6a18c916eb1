import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.ts';
import { startEmulator } from '../../src/emulator/server.ts';
import type { UpstreamClient } from '../../src/upstream/client.ts';
import { clientFor, count, LICENSEE_1001 } from '../helpers/upstream.ts';

/** UpstreamClient.prefetch: a read ahead for a request to come, only from the budget's headroom, never failing. */
let emulator: Emulator;
const clients: UpstreamClient[] = [];
beforeAll(async () => {
  emulator = await startEmulator({ port: 0, rateLimit: false });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await emulator.close();
});
beforeEach(() => {
  emulator.state.log = [];
});

function client(options: Parameters<typeof clientFor>[1]) {
  const debug: [object, string][] = [];
  const made = clientFor(emulator, {
    ...options,
    logger: { warn: () => undefined, debug: (details, message) => void debug.push([details, message]) },
  });
  clients.push(made);
  return { client: made, debug };
}

const PAGE_2 = { eventId: 5001, page: 2 } as const;

describe('UpstreamClient.prefetch', () => {
  it('keeps the page for the call that comes next: one request, not counted by that call', async () => {
    const { client: c } = client({ pageTtlMs: 60_000 });
    await c.prefetch(LICENSEE_1001, 'getreservation', PAGE_2);
    expect(count(emulator, 'getreservation')).toBe(1);
    let sent = 0;
    const page = await c.call(LICENSEE_1001, 'getreservation', PAGE_2, { onSent: () => sent++ });
    expect(page.length).toBe(1000);
    expect(sent).toBe(0);
    expect(count(emulator, 'getreservation')).toBe(1);
  });

  it('makes no call when pages are not kept (UPSTREAM_PAGE_TTL_MS=0)', async () => {
    const { client: c } = client({ pageTtlMs: 0 });
    await c.prefetch(LICENSEE_1001, 'getreservation', PAGE_2);
    expect(count(emulator, 'getreservation')).toBe(0);
  });

  it('without headroom makes no call and fails nothing: a debug line with the code, no parameters', async () => {
    // 5 a window: a read-ahead may count up to 4, and 4 are used (an authenticate and 3 pages).
    const { client: c, debug } = client({ pageTtlMs: 60_000, rateLimit: 5, rateMargin: 0 });
    for (let i = 0; i < 3; i++) await c.call(LICENSEE_1001, 'getreservation', { eventId: 5001, page: 10 + i });
    emulator.state.log = [];
    await expect(c.prefetch(LICENSEE_1001, 'getreservation', PAGE_2)).resolves.toBeUndefined();
    expect(count(emulator, 'getreservation')).toBe(0);
    expect(debug).toEqual([
      [{ endpoint: 'getreservation', licensee: '1001', code: 'RATE_LIMITED' }, 'read-ahead not made'],
    ]);
  });

  it('a call that joins a read-ahead refused for want of headroom makes its own call and is served', async () => {
    const { client: c } = client({ pageTtlMs: 60_000, rateLimit: 5, rateMargin: 0 });
    for (let i = 0; i < 3; i++) await c.call(LICENSEE_1001, 'getreservation', { eventId: 5001, page: 10 + i });
    emulator.state.log = [];
    // 4 of 5 used (an authenticate and 3 pages): no headroom for a read-ahead, a slot for a call.
    // Asked in the same turn, the call finds the read-ahead in flight and waits for it.
    const ahead = c.prefetch(LICENSEE_1001, 'getreservation', PAGE_2);
    const page = await c.call(LICENSEE_1001, 'getreservation', PAGE_2);
    await ahead;
    expect(page.length).toBe(1000);
    expect(count(emulator, 'getreservation')).toBe(1);
  });
});

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.ts';
import type { UpstreamClient } from '../../src/upstream/client.ts';
import type { LazyList } from '../../src/upstream/lazy-list.ts';
import { clientFor, count, emulatorAndClient, LICENSEE_1001 } from '../helpers/upstream.ts';

/**
 * A kept page (the page cache's and the stale copies') holds its bytes, and its decoded form only
 * while a reader holds it: once none does, V8 may collect it, and the next read decodes the bytes
 * again, with no call, to the same records.
 */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Collects what nothing holds: a WeakRef's target lives until the end of the job that made or read it. */
async function collect(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  gc();
}

let emulator: Emulator;
let idle: UpstreamClient;
beforeAll(async () => {
  ({ emulator, client: idle } = await emulatorAndClient({ rateLimit: false }));
  await idle.close();
});
afterAll(() => emulator.close());

let now: number;
let client: UpstreamClient;
beforeEach(() => {
  emulator.state.reset();
  now = Date.now();
});
afterEach(() => client.close());

const PAGE = { eventId: 5001, page: 2 } as const;
type Reservation = { reservationNumber: number; arrivalDate: string | null; contact: { email: string | null } | null };
const numbers = (page: LazyList<Reservation>) => page.slice().map((r) => r.reservationNumber);
const details = (page: LazyList<Reservation>) => page.slice().map((r) => [r.arrivalDate, r.contact?.email]);

describe('a kept page', () => {
  it('is one decoded page while a reader holds it', async () => {
    client = clientFor(emulator, { pageTtlMs: 5_000 });
    const first = await client.call(LICENSEE_1001, 'getreservation', PAGE);
    await collect();
    const second = await client.call(LICENSEE_1001, 'getreservation', PAGE);
    expect(second).toBe(first);
    expect(count(emulator, 'getreservation')).toBe(1);
  });

  it('is decoded again from its bytes, with no call, once no reader holds it', async () => {
    client = clientFor(emulator, { pageTtlMs: 5_000 });
    // The reader reads its records and lets go of the page.
    const read = async () => {
      const page = (await client.call(LICENSEE_1001, 'getreservation', PAGE)) as unknown as LazyList<Reservation>;
      return { numbers: numbers(page), details: details(page), held: new WeakRef(page) };
    };
    const { held, ...before } = await read();
    expect(before.numbers).toHaveLength(1000);
    await collect();
    expect(held.deref()).toBeUndefined();
    const again = (await client.call(LICENSEE_1001, 'getreservation', PAGE)) as unknown as LazyList<Reservation>;
    expect({ numbers: numbers(again), details: details(again) }).toEqual(before);
    expect(count(emulator, 'getreservation')).toBe(1);
  });

  it('answers a read the spent budget refuses from its bytes, once no reader holds its decoded form', async () => {
    client = clientFor(emulator, {
      now: () => now,
      rateLimit: 2,
      rateMargin: 0,
      rateWindowMs: 60_000,
      deadlineMs: 1_000,
      pageTtlMs: 5_000,
      staleMaxMs: 600_000,
    });
    // The authenticate and this read: 2 of 2.
    const read = async () => {
      const page = (await client.call(LICENSEE_1001, 'getreservation', PAGE)) as unknown as LazyList<Reservation>;
      return { fresh: numbers(page), held: new WeakRef(page) };
    };
    const { fresh, held } = await read();
    await collect();
    expect(held.deref()).toBeUndefined();
    now += 30_000; // past the page lifetime, within the budget's window
    const ages: number[] = [];
    const stale = (await client.call(LICENSEE_1001, 'getreservation', PAGE, {
      onStale: (ms) => ages.push(ms),
    })) as unknown as LazyList<Reservation>;
    expect(numbers(stale)).toEqual(fresh);
    expect(ages).toEqual([30_000]);
    expect(count(emulator, 'getreservation')).toBe(1);
  });
});

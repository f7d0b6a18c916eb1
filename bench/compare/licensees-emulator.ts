import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Licensee } from '../../src/emulator/model.ts';
import type { Store } from '../../src/emulator/store.ts';

/**
 * `node --import tsx bench/compare/licensees-emulator.ts --licensees N`: the emulator (no rate
 * limit, port 0) with N licensees of its own beside the demo ones, for bench/growth.ts. The demo
 * data has two licensees; this adds licensee `benchLicensee(i)` (i = 1…N, key `bench-key-<id>`,
 * UTC), each owning a copy of event 5002 (1000 reservations, four hotels) as event
 * `benchEvent(i)`: the same records but for their event id and their reservation numbers, so that
 * no two licensees share an answer. Reads only: a write makes the emulator rebuild its store on
 * `/_emulator/reset`, without them.
 */

export const TEMPLATE_EVENT = 5002;
export const benchLicensee = (i: number) => String(3000 + i);
export const benchKey = (i: number) => `bench-key-${benchLicensee(i)}`;
export const benchEvent = (i: number) => 10_000 + i;
/** Reservation numbers of licensee i's copy: its own range of 100,000. */
const numberOf = (i: number, original: number) => 20_000_000 + i * 100_000 + (original % 100_000);

export function addBenchLicensees(store: Store, count: number): void {
  const template = store.events.get(TEMPLATE_EVENT)!;
  for (let i = 1; i <= count; i++) {
    const licensee: Licensee = { systemIdentifier: benchLicensee(i), key: benchKey(i), timeZone: 'UTC' };
    const eventId = benchEvent(i);
    store.licensees.set(licensee.systemIdentifier, licensee);
    store.events.set(eventId, { ...structuredClone(template), eventId, licensee: licensee.systemIdentifier });
    store.hotelsByEvent.set(
      eventId,
      (store.hotelsByEvent.get(TEMPLATE_EVENT) ?? []).map((h) => ({ ...h, eventId })),
    );
    store.groupCodesByEvent.set(
      eventId,
      (store.groupCodesByEvent.get(TEMPLATE_EVENT) ?? []).map((g) => ({ ...g, eventId })),
    );
    const reservations = (store.reservationsByEvent.get(TEMPLATE_EVENT) ?? []).map((r) => ({
      ...r,
      eventId,
      reservationNumber: numberOf(i, r.reservationNumber),
    }));
    store.reservationsByEvent.set(eventId, reservations);
    for (const r of reservations) store.reservationsByNumber.set(r.reservationNumber, r);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { licensees: { type: 'string', default: '1' } } });
  const count = Number(values.licensees);
  if (!Number.isInteger(count) || count < 1 || count > 10_000) {
    console.error(`--licensees must be a whole number from 1 to 10000, got ${JSON.stringify(values.licensees)}`);
    process.exit(2);
  }
  // Imported here: bench/growth.ts imports this module for its names, without an emulator.
  const { startEmulator } = await import('../../src/emulator/server.ts');
  const emulator = await startEmulator({ port: 0, rateLimit: false });
  addBenchLicensees(emulator.state.store, count);
  console.log(`reservation service emulator listening at ${emulator.url} (${count} bench licensees)`);
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.on(signal, () => void emulator.close().then(() => process.exit(0)));
}

import { describe, expect, it } from 'vitest';
import { demoDataFor, EmulatorState } from '../../src/emulator/state.ts';

const options = {
  seed: 7,
  startMs: Date.parse('2027-01-15T12:00:00Z'),
  rateLimit: false as const,
  rateWindowMs: 60_000,
};

describe('the demo data of one seed and start', () => {
  it('is generated once a process and shared by its emulators', () => {
    expect(demoDataFor(options.seed, options.startMs)).toBe(demoDataFor(options.seed, options.startMs));
    expect(demoDataFor(options.seed + 1, options.startMs)).not.toBe(demoDataFor(options.seed, options.startMs));
  });

  it('is never changed through an emulator: what one writes, another (or a reset) does not see', () => {
    const first = new EmulatorState(options);
    const second = new EmulatorState(options);
    const [eventId, event] = [...first.store.events.entries()][0]!;
    const reservation = first.store.reservationsByEvent.get(eventId)![0]!;
    const name = event.name;
    const status = reservation.status;
    event.name = 'renamed by the first emulator';
    // The demo data's reservations are shared by the stores, and frozen: a change is a copy put in place.
    const changed = status === 'cancelled' ? 'accepted' : 'cancelled';
    expect(() => Object.assign(reservation, { status: changed })).toThrow(TypeError);
    first.store.replaceReservation({ ...reservation, status: changed });
    first.markDirty();
    expect(first.store.reservationsByNumber.get(reservation.reservationNumber)!.status).toBe(changed);
    expect(first.store.reservationsByEvent.get(eventId)![0]!.status).toBe(changed);

    expect(second.store.events.get(eventId)!.name).toBe(name);
    expect(second.store.reservationsByNumber.get(reservation.reservationNumber)!.status).toBe(status);
    first.reset();
    expect(first.store.events.get(eventId)!.name).toBe(name);
    expect(first.store.reservationsByNumber.get(reservation.reservationNumber)!.status).toBe(status);
    expect(new EmulatorState(options).store.events.get(eventId)!.name).toBe(name);
  });
});

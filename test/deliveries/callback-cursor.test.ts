import type { ExecutionResult } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallbackRecord, CallbackStore } from '../../src/deliveries/callback-store.ts';
import { CallbackDeliveries } from '../../src/deliveries/callbacks.ts';
import { OutboundClient } from '../../src/deliveries/outbound.ts';
import { ChangeCursor } from '../../src/deliveries/resume.ts';
import { startTestRouter, type TestRouter } from '../helpers/callback-router.ts';
import { until } from '../helpers/subscriptions.ts';

/*
 * The cursor a callback subscription's record keeps (where another replica resumes it): it follows
 * what the router accepted, a burst of changes is written once rather than per message, and a
 * replica letting the subscription go writes the latest one first.
 */

/** A store that records every cursor written, as if shared (so that closing lets subscriptions go). */
function recordingStore() {
  const written: (string | undefined)[] = [];
  const events: string[] = [];
  const store: CallbackStore = {
    shared: true,
    hold: async (record) => {
      written.push(record.cursor);
      return true;
    },
    advance: async (record) => {
      written.push(record.cursor);
      events.push(`advance ${record.cursor}`);
    },
    drop: async () => void events.push('drop'),
    letGo: async () => void events.push('let go'),
    watch: () => {},
    close: async () => {},
  };
  return { store, written, events };
}

/**
 * A stream whose resolvers tell `cursor` each change's instant as it is handed out, as
 * `reservationChanged` does; it then waits, live, until it is returned.
 */
function changes(cursor: ChangeCursor, instants: string[]): AsyncIterableIterator<ExecutionResult> {
  const queue = [...instants];
  let over = false;
  let waiting: ((result: IteratorResult<ExecutionResult>) => void) | undefined;
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next() {
      const instant = queue.shift();
      if (instant === undefined)
        return over ? Promise.resolve({ done: true, value: undefined }) : new Promise((resolve) => (waiting = resolve));
      cursor.at(instant);
      return Promise.resolve({ done: false, value: { data: { reservationChanged: { at: instant } } } });
    },
    return() {
      over = true;
      waiting?.({ done: true, value: undefined });
      return Promise.resolve({ done: true, value: undefined });
    },
  };
}

const minute = (n: number) => new Date(Date.UTC(2025, 2, 1, 10, n)).toISOString();

describe('the cursor of a callback subscription', () => {
  let router: TestRouter;
  beforeAll(async () => {
    router = await startTestRouter();
  });
  afterAll(() => router.close());

  const record = (id: string): CallbackRecord => ({
    key: id,
    target: { callbackUrl: `${router.prefix}/${id}`, subscriptionId: id, verifier: 'v', heartbeatIntervalMs: 0 },
    request: { url: 'http://127.0.0.1/graphql', headers: {}, params: {} },
  });

  it('is held from the stream’s start, and a burst of changes the router accepted is written once, at the latest', async () => {
    const { store, written } = recordingStore();
    const deliveries = new CallbackDeliveries(new OutboundClient([router.prefix]), store);
    const cursor = new ChangeCursor();
    cursor.at(minute(0));
    const instants = Array.from({ length: 20 }, (_, i) => minute(i + 1));
    await deliveries.start(record('burst'), changes(cursor, instants), cursor);
    await until(() => router.of('burst', 'next').length === 20);
    await until(() => written.at(-1) === minute(20));
    expect(written[0]).toBe(minute(0));
    // The first accepted at once, the rest together a second later (a loaded machine may split them once more).
    expect(written.length).toBeLessThanOrEqual(4);
    await deliveries.close();
  });

  it('is written before a replica lets the subscription go', async () => {
    const { store, written, events } = recordingStore();
    const deliveries = new CallbackDeliveries(new OutboundClient([router.prefix]), store);
    const cursor = new ChangeCursor();
    cursor.at(minute(0));
    await deliveries.start(record('kept'), changes(cursor, [minute(1), minute(2), minute(3)]), cursor);
    await until(() => router.of('kept', 'next').length === 3);
    await deliveries.close();
    expect(written.at(-1)).toBe(minute(3));
    expect(events.at(-1)).toBe('let go');
    expect(events.indexOf(`advance ${minute(3)}`)).toBeLessThan(events.indexOf('let go'));
  });

  it('does not move for a change the router refused', async () => {
    const { store, written } = recordingStore();
    router.answer = (received) => (received.message.id === 'refused' && received.message.action === 'next' ? 404 : 204);
    const deliveries = new CallbackDeliveries(new OutboundClient([router.prefix]), store);
    const cursor = new ChangeCursor();
    cursor.at(minute(0));
    await deliveries.start(record('refused'), changes(cursor, [minute(5)]), cursor);
    await until(() => deliveries.active() === 0);
    expect(written).toEqual([minute(0)]);
    router.answer = () => 204;
    await deliveries.close();
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { book, listen, subscribeSse, until } from '../helpers/subscriptions.ts';

/*
 * What the gateway writes itself is told at once to the event's subscribers (docs/clients.md, "Live
 * reservation changes"), and a feed that starts loses nothing written while its baseline is read.
 */
const QUERY = `subscription Changes($eventId: Int!) {
  reservationChanged(eventId: $eventId) { kind reservation { reservationNumber customFieldValues { customFieldId value } } }
}`;

type Change = {
  kind: string;
  reservation: { reservationNumber: number; customFieldValues: { customFieldId: number; value: string }[] };
};
const changesOf = (received: { data?: Record<string, unknown> | null }[]) =>
  received.map((result) => result.data?.reservationChanged as Change);

describe('our own writes', () => {
  let t: TestGateway;
  let server: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    // Polls a second apart: what arrives before the next poll was told without one.
    t = await startGateway({ rateLimit: false }, { CHANGES_POLL_INTERVAL_MS: '1000' });
    server = await listen(t);
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });
  const pollsOf = (eventId: number) =>
    t.gateway.changeFeeds.active().find((feed) => feed.eventId === eventId)?.polls ?? 0;

  it('setCustomFieldValue on a reservation is told as CHANGED with the new value before any poll, and once', async () => {
    const subscriber = await subscribeSse(fetch, server.url, { eventId: 5002 }, {}, QUERY);
    // The feed has read the minute its subscriber came in (its first poll, right after the first page).
    await until(() => pollsOf(5002) > 0);
    const created = await t.exec<{ createCustomField: { customField: { customFieldId: number } } }, undefined>(
      'mutation { createCustomField(input: { name: "Told at once", eventId: 5002 }) { customField { customFieldId } } }',
    );
    const customFieldId = created.data!.createCustomField.customField.customFieldId;
    const reservationNumber = t.emulator.state.store.reservationsByEvent
      .get(5002)!
      .find((r) => r.status !== 'cancelled')!.reservationNumber;

    const pollsBefore = pollsOf(5002);
    const set = await t.exec(
      `mutation { setCustomFieldValue(input: { customFieldId: ${customFieldId}, value: "yes", reservationNumber: ${reservationNumber}, eventId: 5002 }) { value } }`,
    );
    expect(set.errors).toBeUndefined();
    await subscriber.take(1);
    // Told by the write itself: no poll of the feed had run since.
    expect(pollsOf(5002)).toBe(pollsBefore);
    expect(changesOf(subscriber.received)).toEqual([
      {
        kind: 'CHANGED',
        reservation: {
          reservationNumber,
          customFieldValues: expect.arrayContaining([{ customFieldId, value: 'yes' }]),
        },
      },
    ]);
    // The polls that read it afterwards tell nothing more.
    await until(() => pollsOf(5002) >= pollsBefore + 2);
    expect(subscriber.received).toHaveLength(1);
    subscriber.close();
  });

  it('a write with no subscriber of its event reads nothing more than the write', async () => {
    t.clearLog();
    const reservationNumber = t.emulator.state.store.reservationsByEvent.get(5003)![0]!.reservationNumber;
    const created = await t.exec<{ createCustomField: { customField: { customFieldId: number } } }, undefined>(
      'mutation { createCustomField(input: { name: "Unwatched", eventId: 5003 }) { customField { customFieldId } } }',
    );
    t.clearLog();
    await t.exec(
      `mutation { setCustomFieldValue(input: { customFieldId: ${created.data!.createCustomField.customField.customFieldId}, value: "x", reservationNumber: ${reservationNumber}, eventId: 5003 }) { value } }`,
    );
    // The field's event is checked before the write, as always; no reservation is read after it.
    expect(t.calls().map((call) => call.endpoint)).toEqual(['getcustomfields', 'postcustomfieldvalue']);
  });
});

describe('a feed that starts', () => {
  it('tells a booking made while its baseline is read, once', async () => {
    const t = await startGateway({ rateLimit: false }, { CHANGES_POLL_INTERVAL_MS: '500' });
    const server = await listen(t);
    try {
      // Each page of the baseline read takes 400 ms: event 5001 has many.
      await fetch(`${t.emulator.url}/_emulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rules: [{ endpoint: 'getreservation', latencyMs: 400 }] }),
      });
      const subscriber = await subscribeSse(fetch, server.url, { eventId: 5001 }, {}, QUERY);
      // Once the feed has read its first page and the minute its subscriber came in (what was there
      // then is no change), and before its read has reached the last page.
      const feed = () => t.gateway.changeFeeds.active().find((f) => f.eventId === 5001)!;
      await until(() => (feed()?.polls ?? 0) > 0);
      const { reservationNumber } = await book(t.emulator, { eventId: 5001 });
      await fetch(`${t.emulator.url}/_emulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rules: [] }),
      });
      await until(() => subscriber.received.length > 0, 20_000);
      const polls = feed().polls;
      await until(() => feed().polls >= polls + 2);
      expect(
        changesOf(subscriber.received).map((change) => [change.kind, change.reservation.reservationNumber]),
      ).toEqual([['CREATED', reservationNumber]]);
      subscriber.close();
    } finally {
      await server.close();
      await t.close();
    }
  }, 40_000);
});

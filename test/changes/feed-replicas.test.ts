import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import type { LogEntry } from '../../src/emulator/state.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';
import { type Replica, startThreeReplicas } from '../helpers/replicas.ts';
import { book, pause, type Subscriber, subscribeSse, until } from '../helpers/subscriptions.ts';

const serverPath = redisServerOrSkip();
const EVENT = 5002;

/**
 * The change feeds across replicas, as deployed: three gateway processes on one Redis and one emulator.
 * One of them polls an event for the subscribers of all three; when it dies, another goes on from
 * where it stopped.
 */
describe.skipIf(!serverPath)('reservationChanged on three replicas', () => {
  let redis: TestRedis;
  let emulator: Emulator;
  let replicas: Replica[] = [];

  beforeAll(async () => {
    redis = await startRedis(serverPath!);
    emulator = await startEmulator({ port: 0, rateLimit: false });
    replicas = await startThreeReplicas(emulator.url, redis.url, 'feeds:', {
      CHANGES_POLL_INTERVAL_MS: '300',
      LOG_LEVEL: 'warn',
    });
  });
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await emulator?.close();
    await redis?.close();
  });

  /** The event's reads in the log: polls carry `modifiedAfterDate`, baseline reads do not. */
  const reads = (from = 0) =>
    emulator.state.log
      .slice(from)
      .filter((entry) => entry.endpoint === 'getreservation' && String(entry.params.eventId) === String(EVENT));
  const polls = (from = 0) => reads(from).filter((entry) => 'modifiedAfterDate' in entry.params);
  const pollers = (entries: LogEntry[]) => [...new Set(entries.map((entry) => entry.userAgent))];
  const told = (subscriber: Subscriber) =>
    subscriber.received.map((result) => {
      const change = result.data?.reservationChanged as
        | { kind: string; reservation: { reservationNumber: number } }
        | undefined;
      if (!change) throw new Error(`not a change: ${JSON.stringify(result)}`);
      return `${change.kind} ${change.reservation.reservationNumber}`;
    });

  it('one replica polls for the subscribers of all three, each told every change once; when it dies another goes on, losing nothing', async () => {
    const subscribe = (replica: Replica) => subscribeSse(fetch, replica.url, { eventId: EVENT });
    // Replica 1 takes the lease with the first subscriber; the others follow it.
    const first = await subscribe(replicas[0]!);
    await until(() => polls().length > 0, 10_000);
    const onTwo = await subscribe(replicas[1]!);
    const onThree = [await subscribe(replicas[2]!), await subscribe(replicas[2]!)];
    const survivors = [onTwo, ...onThree];
    // The followers are in once the holder's next polls come after their joins.
    const joined = emulator.state.log.length;
    await until(() => polls(joined).length >= 2, 10_000);

    const expected: string[] = [];
    for (let i = 0; i < 6; i++)
      expected.push(`CREATED ${(await book(emulator, { eventId: EVENT })).reservationNumber}`);
    await until(() => [first, ...survivors].every((s) => s.received.length >= expected.length), 10_000);
    await pause(1_000);
    for (const subscriber of [first, ...survivors]) expect(told(subscriber).sort()).toEqual([...expected].sort());
    expect(pollers(polls())).toEqual(['replica-1']);
    // One baseline read (its first page, then the rest) for the four subscribers.
    expect(reads().filter((entry) => !('modifiedAfterDate' in entry.params) && entry.params.page === '1')).toHaveLength(
      1,
    );

    // Replica 1 crashes: its lease lapses unreleased. Changes made before another replica takes over are not lost.
    first.close();
    await replicas[0]!.kill();
    const killed = emulator.state.log.length;
    for (let i = 0; i < 4; i++)
      expected.push(`CREATED ${(await book(emulator, { eventId: EVENT })).reservationNumber}`);
    await until(() => survivors.every((s) => s.received.length >= expected.length), 20_000);
    await pause(1_000);

    for (const subscriber of survivors) expect(told(subscriber).sort()).toEqual([...expected].sort());
    const after = polls(killed);
    expect(pollers(after)).toHaveLength(1);
    expect(['replica-2', 'replica-3']).toContain(pollers(after)[0]);
    // The new poller went on from the state written to Redis: no new baseline read.
    expect(reads(killed).filter((entry) => !('modifiedAfterDate' in entry.params))).toEqual([]);
    for (const subscriber of survivors) subscriber.close();
  }, 60_000);
});

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';
import { post, type Replica, startReplicas } from '../helpers/replicas.ts';
import { readBody } from '../helpers/request-body.ts';
import { book, feedHasRead, pause, until } from '../helpers/subscriptions.ts';

/*
 * Issue 37, "No change lost while Redis is away": two replicas on one Redis, a webhook endpoint,
 * and a booking every 2 s while Redis is stopped for 20 s (it saves its data as it stops and loads
 * it again: endpoints, sequences and the queue outlive the outage). Fault: the changes the feed
 * told while Redis was away, or just after, never reached the endpoint (12 of 300): the replica
 * queueing them gave its role up at the first failed renewal and left the feeds, and what it could
 * not queue was dropped. Now the holder keeps its role and what its feeds tell, and queues it once
 * Redis is back; each reservation's deliveries carry sequences 1..n, each change once.
 *
 * Then the holder is held up (SIGSTOP) as Redis returns, so that the other replica takes the role
 * over: a change both tell is queued once, and a creation the holder kept is not sent after the
 * acceptance the other told. Last, the holder is killed during an outage: what it kept is lost with
 * it, as docs/webhooks.md says, and recoverWebhookEndpoint(since) sends the latest state of each
 * reservation the endpoint has not had.
 */

const serverPath = redisServerOrSkip();
const EVENT_ID = 5003;
const OUTAGE_MS = 20_000;
/** The second outage, shorter: still longer than the feed's state outlives its poller (three leases, 9 s here). */
const SECOND_OUTAGE_MS = 12_000;
const STEP_MS = 2_000;

interface Got {
  reservationNumber: number;
  type: string;
  status: string | null;
  sequence: number;
  webhookId: string;
}

/** A reservation booked by `booking`: when it was made and when accepted (our clock). */
interface Booked {
  reservationNumber: number;
  createdAt: number;
  acceptedAt: number;
}

describe.skipIf(!serverPath)('webhooks while Redis is away, under two replicas', () => {
  let redis: TestRedis;
  let emulator: Emulator;
  let replicas: Replica[] = [];
  let receiver: ReturnType<typeof createServer>;
  let endpointId: string;
  const received: Got[] = [];

  beforeAll(async () => {
    redis = await startRedis(serverPath!);
    emulator = await startEmulator({ port: 0, rateLimit: false });
    receiver = createServer(async (request, response) => {
      const { type, data } = JSON.parse(await readBody(request)) as {
        type: string;
        data: { reservationNumber: number; status: string | null; sequence: number };
      };
      const { reservationNumber, status, sequence } = data;
      received.push({ reservationNumber, type, status, sequence, webhookId: String(request.headers['webhook-id']) });
      response.writeHead(204).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    replicas = await startReplicas(2, emulator.url, redis.url, 'webhooks-outage:', {
      CHANGES_POLL_INTERVAL_MS: '500',
      // Alone while Redis is away, each replica keeps its polls every 500 ms within its share.
      UPSTREAM_RATE_LIMIT: '6000',
      WEBHOOK_ALLOW_HTTP_HOSTS: '127.0.0.1',
      LOG_LEVEL: 'info',
    });
    const registeredAt = emulator.state.log.length;
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    const created = await post(
      replicas[0]!.url,
      `mutation { createWebhookEndpoint(input: { url: "${url}", eventIds: [${EVENT_ID}] }) { endpoint { id } userErrors { message } } }`,
    );
    endpointId = (created.body.data as { createWebhookEndpoint: { endpoint: { id: string } } }).createWebhookEndpoint
      .endpoint.id;
    // A feed that starts tells what changes once it has read the event (issue 36).
    await feedHasRead(emulator, EVENT_ID, registeredAt);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    receiver?.closeAllConnections();
    await new Promise<void>((resolve) => receiver?.close(() => resolve()));
    await emulator?.close();
    await redis?.close();
  });

  /**
   * Books every STEP_MS until stopped: each step makes a reservation (NEW) and accepts the one made
   * at the step before, so each reservation changes twice, 2 s apart (four polls between).
   */
  function booking(): { booked: Booked[]; stop(): Promise<void> } {
    const booked: Booked[] = [];
    let going = true;
    const accept = async (last: Booked | undefined) => {
      if (!last) return;
      await book(emulator, { eventId: EVENT_ID, reservationNumber: last.reservationNumber, status: 'accepted' });
      last.acceptedAt = Date.now();
    };
    const done = (async () => {
      while (going) {
        const made = { ...(await book(emulator, { eventId: EVENT_ID })), createdAt: Date.now(), acceptedAt: Infinity };
        await accept(booked.at(-1));
        booked.push(made);
        await pause(STEP_MS);
      }
      await accept(booked.at(-1));
    })();
    return {
      booked,
      stop: async () => {
        going = false;
        await done;
      },
    };
  }

  const of = (reservationNumber: number) =>
    received
      .filter((got) => got.reservationNumber === reservationNumber)
      .sort((a, b) => a.sequence - b.sequence || a.webhookId.localeCompare(b.webhookId));
  const accepted = (reservationNumber: number) => of(reservationNumber).some((got) => got.status === 'ACCEPTED');
  const shown = (reservationNumber: number) =>
    `${reservationNumber}: ${of(reservationNumber)
      .map((got) => `${got.type} ${got.status} #${got.sequence}`)
      .join(', ')}`;

  /**
   * Each reservation delivered, once per change: sequences 1..n without a gap, no webhook-id twice,
   * and the last its latest state (ACCEPTED).
   */
  function expectEachOnceInOrder(booked: readonly Booked[]) {
    for (const { reservationNumber } of booked) {
      const got = of(reservationNumber);
      expect(
        got.map((each) => each.sequence),
        shown(reservationNumber),
      ).toEqual(got.map((_, i) => i + 1));
      expect(new Set(got.map((each) => each.webhookId)).size, shown(reservationNumber)).toBe(got.length);
      expect(got.at(-1)?.status, shown(reservationNumber)).toBe('ACCEPTED');
    }
  }

  /** The replica holding the `webhooks` lease, as its last word on it says. */
  const queueing = () =>
    replicas.filter((replica) => {
      const output = replica.output();
      return (
        output.lastIndexOf('webhooks: this replica queues the changes') >
        output.lastIndexOf('webhooks: another replica queues the changes')
      );
    });

  it('every change made while Redis was away, or around it, reaches the endpoint once, in order', async () => {
    const [holder] = queueing();
    expect(holder).toBeDefined();
    const before = holder!.output().length;
    const bookings = booking();
    await pause(6_000);
    const outageFrom = Date.now();
    await redis.stop({ keep: true });
    await pause(OUTAGE_MS);
    await redis.start();
    const outageTo = Date.now();
    await pause(8_000);
    await bookings.stop();
    const { booked } = bookings;
    expect(booked.filter((made) => made.createdAt > outageFrom && made.acceptedAt < outageTo).length).toBeGreaterThan(
      5,
    );
    await until(() => booked.every(({ reservationNumber }) => accepted(reservationNumber)), 30_000);
    // Anything late (a second delivery, a later sequence) has time to come.
    await pause(1_000);

    expectEachOnceInOrder(booked);
    // Both states, NEW then ACCEPTED, of every reservation, save one made while Redis was away and
    // accepted once it was back: when the other replica took the role over and told the acceptance
    // before this one queued the creation it kept, the creation is not sent after it (it would pass
    // for the newest state).
    for (const { reservationNumber, createdAt, acceptedAt } of booked) {
      if (createdAt < outageTo && acceptedAt >= outageTo) continue;
      expect(
        of(reservationNumber).map((got) => `${got.type} ${got.status} #${got.sequence}`),
        shown(reservationNumber),
      ).toEqual(['reservation.created NEW #1', 'reservation.changed ACCEPTED #2']);
    }
    // The holder said it keeps the changes and, back, that it queued them; nothing was dropped.
    const said = holder!.output().slice(before);
    expect(said).toContain('Redis unreachable: webhook changes are kept until it is back');
    expect(said).toContain('Redis reachable again: the webhook changes kept meanwhile are queued');
    expect(said).not.toContain('webhook changes dropped');
  }, 120_000);

  it('the other replica takes the role over as Redis returns: what the holder kept is queued after all, each change once, in order', async () => {
    await until(() => queueing().length === 1, 10_000);
    const [holder] = queueing();
    const other = replicas.find((replica) => replica !== holder)!;
    const before = holder!.output().length;
    const bookings = booking();
    await pause(4_000);
    await redis.stop({ keep: true });
    await pause(SECOND_OUTAGE_MS);
    // Held up as Redis returns (SIGSTOP): the other replica takes the lapsed lease and joins the feed.
    const heldFrom = Date.now();
    process.kill(holder!.pid, 'SIGSTOP');
    let resumedAt: number;
    try {
      await redis.start();
      await until(() => queueing().includes(other), 10_000);
      await pause(2_000);
    } finally {
      process.kill(holder!.pid, 'SIGCONT');
      resumedAt = Date.now();
    }
    await pause(8_000);
    await bookings.stop();
    const { booked } = bookings;
    await until(() => booked.every(({ reservationNumber }) => accepted(reservationNumber)), 30_000);
    await pause(1_000);

    expectEachOnceInOrder(booked);
    expect(queueing()).toEqual([other]);
    // Both states of every reservation, save one made before the holder resumed and accepted after
    // it was held up: the other replica's feed started from the service as it found it (a creation
    // made meanwhile is not told), and a creation kept is not sent after an acceptance it told.
    for (const { reservationNumber, createdAt, acceptedAt } of booked) {
      if (createdAt < resumedAt && acceptedAt >= heldFrom) continue;
      expect(
        of(reservationNumber).map((got) => `${got.type} ${got.status} #${got.sequence}`),
        shown(reservationNumber),
      ).toEqual(['reservation.created NEW #1', 'reservation.changed ACCEPTED #2']);
    }
    expect(holder!.output().slice(before)).toContain(
      'Redis reachable again: the webhook changes kept meanwhile are queued',
    );
  }, 120_000);

  it('the replica queueing the changes dies while Redis is away: recoverWebhookEndpoint sends what it kept', async () => {
    await until(() => queueing().length === 1, 10_000);
    const [holder] = queueing();
    const survivor = replicas.find((replica) => replica !== holder)!;
    const since = new Date(emulator.state.clock.now() - 60_000).toISOString();
    const bookings = booking();
    await pause(4_000);
    await redis.stop({ keep: true });
    await pause(SECOND_OUTAGE_MS / 2);
    await holder!.kill();
    replicas = [survivor];
    await pause(SECOND_OUTAGE_MS / 2);
    await redis.start();
    // The survivor takes the role over once Redis is back, and its feed tells what changes after.
    await pause(10_000);
    await bookings.stop();
    const { booked } = bookings;
    await until(() => accepted(booked.at(-1)!.reservationNumber), 30_000);

    const recovered = await post(
      survivor.url,
      `mutation { recoverWebhookEndpoint(id: "${endpointId}", since: "${since}") { queued userErrors { message } } }`,
    );
    expect(recovered.body.errors, survivor.output().slice(-4_000)).toBeUndefined();
    const { queued, userErrors } = (
      recovered.body.data as { recoverWebhookEndpoint: { queued: number; userErrors: unknown[] } }
    ).recoverWebhookEndpoint;
    expect(userErrors).toEqual([]);
    // What the dead replica kept was lost with it: the recovery sent some.
    expect(queued).toBeGreaterThan(0);
    await until(() => booked.every(({ reservationNumber }) => accepted(reservationNumber)), 30_000);
    await pause(1_000);
    expectEachOnceInOrder(booked);
  }, 120_000);
});

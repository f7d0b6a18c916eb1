import '../../examples/federation/quiet-apollo.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, startHiveGateway } from '../../examples/federation/hive-gateway.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { book, listen, subscribeSse, until } from '../helpers/subscriptions.ts';
import { composeSupergraph } from '../schema/federation/compose.ts';

/*
 * A real router: Hive Gateway with the http-callback transport for our subgraph's subscriptions. A
 * client subscribes through Hive Gateway over SSE; we call Hive Gateway back for each change; when
 * the client leaves, Hive Gateway forgets the subscription and our next heartbeat ends it.
 */

const POLL_MS = 300;
const HEARTBEAT_MS = 2_000;

let t: TestGateway;
let ours: Awaited<ReturnType<typeof listen>>;
let hive: Awaited<ReturnType<typeof startHiveGateway>>;

beforeAll(async () => {
  const port = await freePort();
  t = await startGateway(
    { rateLimit: false },
    {
      CHANGES_POLL_INTERVAL_MS: String(POLL_MS),
      SUBSCRIPTION_CALLBACK_URLS: `http://127.0.0.1:${port}/callback`,
    },
  );
  ours = await listen(t);
  const supergraph = composeSupergraph({ reservations: ours.url, registrations: 'http://127.0.0.1:9/graphql' });
  hive = await startHiveGateway(supergraph, { port, callbacks: { heartbeatMs: HEARTBEAT_MS } });
}, 60_000);

afterAll(async () => {
  await hive?.close();
  await ours?.close();
  await t?.close();
});

it('a booking reaches the client subscribed through Hive Gateway by callbacks, and the callbacks stop once it leaves', async () => {
  const client = await subscribeSse(fetch, hive.url, { eventId: 5003 });
  expect(client.response.status).toBe(200);
  // Hive Gateway subscribed by callback: no connection is held for it, a subscription is recorded.
  await until(() => t.gateway.callbacks.active() === 1, 10_000);
  // Once the feed has read the service as its subscriber found it (issue 36).
  await until(() => t.gateway.changeFeeds.active().some((feed) => feed.polls > 0), 10_000);
  const { reservationNumber } = await book(t.emulator, { eventId: 5003 });
  const [first] = await Promise.race([
    client.take(1),
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('no change within the poll interval plus 5 s')), POLL_MS + 5_000),
    ),
  ]);
  expect(first).toMatchObject({
    data: { reservationChanged: { kind: 'CREATED', reservation: { reservationNumber, eventId: 5003 } } },
  });
  client.close();
  // Our next check is answered 404: within one heartbeat nothing of it remains, the feed stopped.
  await until(() => t.gateway.callbacks.active() === 0, HEARTBEAT_MS + 1_000);
  await until(() => t.gateway.changeFeeds.active().length === 0, 2_000);
}, 60_000);

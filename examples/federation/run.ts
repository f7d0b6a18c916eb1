import './quiet-apollo.ts';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { loadConfig } from '../../src/config/environment.ts';
import { startEmulator } from '../../src/emulator/server.ts';
import { createGateway } from '../../src/gateway.ts';
import { subgraphSdl } from '../../src/schema/index.ts';
import { startHiveGateway } from './hive-gateway.ts';
import { REGISTRATION_SDL, startRegistrationSubgraph } from './registration-subgraph.ts';
import { RESERVATIONS_SUBGRAPH } from './subgraph-names.ts';

/**
 * `npm run example:federation`: the company graph in miniature, all on 127.0.0.1. The emulator
 * with its demo data, this gateway as the reservations subgraph, the registration subgraph, and
 * Hive Gateway serving their supergraph (composed here by @theguild/federation-composition) on
 * FEDERATION_PORT (4100 unless set), as docs/federating.md configures it: demand control at our
 * QUERY_MAX_UPSTREAM_CALLS, every request to our subgraph signed (ROUTER_HMAC_SECRET, a secret drawn
 * for this run), and subscriptions to it through router callbacks (SUBSCRIPTION_CALLBACK_URLS, Hive
 * Gateway's /callback). Ctrl-C stops everything.
 */
const port = Number(process.env.FEDERATION_PORT ?? 4100);
const hmacSecret = randomBytes(32).toString('base64url');
const callbackUrl = `http://127.0.0.1:${port}/callback`;

/** What has been started so far, stopped in reverse order on Ctrl-C or when a later step fails. */
const started: (() => Promise<void>)[] = [];
async function stopAll(): Promise<void> {
  for (const stopOne of [...started].reverse()) await stopOne();
}

// Listened for from the start: Ctrl-C while Hive Gateway starts stops what is already running.
let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await stopAll();
  console.log('stopped');
  process.exit(0);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());

try {
  const emulator = await startEmulator({ port: 0 });
  started.push(() => emulator.close());
  const config = loadConfig({
    LOG_LEVEL: 'warn',
    ROUTER_HMAC_SECRET: hmacSecret,
    SUBSCRIPTION_CALLBACK_URLS: callbackUrl,
    // How often a subscribed event is polled (15 s unless set).
    ...(process.env.CHANGES_POLL_INTERVAL_MS ? { CHANGES_POLL_INTERVAL_MS: process.env.CHANGES_POLL_INTERVAL_MS } : {}),
  });
  const gateway = createGateway({ ...config, upstreamBaseUrl: emulator.url });
  started.push(() => gateway.close());
  const server = createServer(gateway.yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  started.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const reservationsUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;

  // Registrations for the attendees of event 5001's first reservations.
  const linked = [...emulator.state.store.reservationsByEvent.get(5001)!]
    .sort((a, b) => a.reservationNumber - b.reservationNumber)
    .filter((r) => r.attendeeId && r.registrationEventId)
    .slice(0, 5);
  const registrations = await startRegistrationSubgraph(
    linked.map((r, i) => ({
      id: `reg-${i + 1}`,
      attendeeId: r.attendeeId!,
      registrationEventId: r.registrationEventId!,
      eventId: 5001,
    })),
  );
  started.push(() => registrations.close());

  const composed = composeServices([
    { name: RESERVATIONS_SUBGRAPH, url: reservationsUrl, typeDefs: parse(subgraphSdl()) },
    { name: 'registrations', url: registrations.url, typeDefs: parse(REGISTRATION_SDL) },
  ]);
  if (composed.errors) throw new Error(composed.errors.map((e) => e.message).join('\n'));
  const hive = await startHiveGateway(composed.supergraphSdl, {
    port,
    demandControlMaxCost: config.maxUpstreamCallsPerOperation,
    hmacSecret,
    callbacks: { heartbeatMs: 5_000, publicUrl: callbackUrl },
  });
  started.push(() => hive.close());

  console.log(`emulator               ${emulator.url}
reservations subgraph  ${reservationsUrl}
registrations subgraph ${registrations.url}
Hive Gateway           ${hive.url}  (open it in a browser)

Try:
  curl -s ${hive.url} -H 'content-type: application/json' -d '{"query":"{ registrations { id event { name hotels { name } reservations(first: 3) { edges { node { reservationNumber attendee { registrations { id } } } } } } } }"}'

Ctrl-C stops everything.`);
} catch (error) {
  // A failed step (composition, Hive's start) must not leave the servers before it running.
  stopping = true;
  await stopAll();
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
}

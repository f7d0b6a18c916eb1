import './quiet-apollo.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { composeServices } from '@theguild/federation-composition';
import { parse } from 'graphql';
import { loadConfig } from '../../src/config.ts';
import { startEmulator } from '../../src/emulator/server.ts';
import { subgraphSdl } from '../../src/schema/index.ts';
import { createGateway } from '../../src/server.ts';
import { startHiveGateway } from './hive-gateway.ts';
import { REGISTRATION_SDL, startRegistrationSubgraph } from './registration-subgraph.ts';
import { RESERVATIONS_SUBGRAPH } from './subgraph-names.ts';

/**
 * `npm run example:federation`: the company graph in miniature, all on 127.0.0.1. The emulator
 * with its demo data, this gateway as the reservations subgraph, the registration subgraph, and
 * Hive Gateway serving their supergraph (composed here by @theguild/federation-composition) on
 * FEDERATION_PORT (4100 unless set). Ctrl-C stops everything.
 */
const port = Number(process.env.FEDERATION_PORT ?? 4100);

const emulator = await startEmulator({ port: 0 });
const gateway = createGateway({ ...loadConfig({ LOG_LEVEL: 'warn' }), upstreamBaseUrl: emulator.url });
const server = createServer(gateway.yoga);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const reservationsUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;

// Registrations for the attendees of event 5001's first reservations.
const linked = [...emulator.state.store.reservationsByEvent.get(5001)!]
  .sort((a, b) => a.reservationNumber - b.reservationNumber)
  .filter((r) => r.attendeeId && r.registrationEventId)
  .slice(0, 5);
const registrations = await startRegistrationSubgraph(
  linked.map((r, i) => ({ id: `reg-${i + 1}`, attendeeId: r.attendeeId!, registrationEventId: r.registrationEventId!, eventId: 5001 })),
);

const composed = composeServices([
  { name: RESERVATIONS_SUBGRAPH, url: reservationsUrl, typeDefs: parse(subgraphSdl) },
  { name: 'registrations', url: registrations.url, typeDefs: parse(REGISTRATION_SDL) },
]);
if (composed.errors) throw new Error(composed.errors.map((e) => e.message).join('\n'));
const hive = await startHiveGateway(composed.supergraphSdl, { port });

console.log(`reservations subgraph  ${reservationsUrl}
registrations subgraph ${registrations.url}
Hive Gateway           ${hive.url}  (open it in a browser)

Try:
  curl -s ${hive.url} -H 'content-type: application/json' -d '{"query":"{ registrations { id event { name hotels { name } reservations(first: 3) { edges { node { reservationNumber attendee { registrations { id } } } } } } } }"}'

Ctrl-C stops everything.`);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await hive.close();
  await registrations.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await gateway.close();
  await emulator.close();
  console.log('stopped');
  process.exit(0);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());

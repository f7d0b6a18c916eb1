import '../../../examples/federation/quiet-apollo.ts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startHiveGateway } from '../../../examples/federation/hive-gateway.ts';
import {
  type RegistrationRecord,
  type RegistrationSubgraph,
  startRegistrationSubgraph,
} from '../../../examples/federation/registration-subgraph.ts';
import { readyToCount, startGateway, type TestGateway } from '../../helpers/gateway.ts';
import { startApolloGateway } from './apollo-gateway.ts';
import { composeSupergraph } from './compose.ts';

/**
 * Real federation gateways from npm (Apollo Gateway, Hive Gateway) over real HTTP: our subgraph
 * (this gateway over the emulator) and a registration subgraph, composed into one supergraph. A
 * query through a federation gateway costs the upstream calls the same query costs made directly.
 */

let t: TestGateway;
let server: Server;
let registrations: RegistrationSubgraph;
let records: RegistrationRecord[];
/** The Authorization header of each request our subgraph received. */
const ourAuthorizations: (string | undefined)[] = [];
let supergraph: string;
const gateways: Record<string, { url: string; close(): Promise<void> }> = {};

beforeAll(async () => {
  t = await startGateway();
  server = createServer((req, res) => {
    ourAuthorizations.push(req.headers.authorization);
    void t.gateway.yoga(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // Registrations of attendees of the first reservations of 5001, and of nobody in 5002 and 5003.
  const linked = [...t.emulator.state.store.reservationsByEvent.get(5001)!]
    .sort((a, b) => a.reservationNumber - b.reservationNumber)
    .slice(0, 5)
    .filter((r) => r.attendeeId && r.registrationEventId);
  records = [
    ...linked.map((r, i) => ({
      id: `reg-${i}`,
      attendeeId: r.attendeeId!,
      registrationEventId: r.registrationEventId!,
      eventId: 5001,
    })),
    { id: 'reg-a', attendeeId: 'X-1', registrationEventId: 'R-X', eventId: 5002 },
    { id: 'reg-b', attendeeId: 'X-2', registrationEventId: 'R-X', eventId: 5003 },
  ];
  registrations = await startRegistrationSubgraph(records);
  const { port } = server.address() as AddressInfo;
  supergraph = composeSupergraph({
    reservations: `http://127.0.0.1:${port}/graphql`,
    registrations: registrations.url,
  });
  gateways.apollo = await startApolloGateway(supergraph);
  gateways.hive = await startHiveGateway(supergraph);
}, 60_000);

afterAll(async () => {
  await Promise.all(Object.values(gateways).map((g) => g.close()));
  await registrations?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await t?.close();
});

beforeEach(() => readyToCount(t));

async function through(
  gateway: string,
  query: string,
  authorization?: string,
): Promise<{ data?: Record<string, unknown>; errors?: unknown[] }> {
  const res = await fetch(gateways[gateway]!.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify({ query }),
  });
  return (await res.json()) as never;
}

/** The upstream calls since the last count, as comparable strings (order aside: calls run concurrently). */
const upstreamCalls = () =>
  t
    .calls()
    .map((c) => `${c.endpoint} ${JSON.stringify(c.params)}`)
    .sort();

const REGISTRATION_TO_RESERVATIONS = `{ registrations { id event { name hotels { name } reservations(first: 3) { edges { node { reservationNumber } } } } } }`;
const directForEvents = (ids: number[]) =>
  `{ ${ids.map((id) => `e${id}: event(eventId: ${id}) { name hotels { name } reservations(first: 3) { edges { node { reservationNumber } } } }`).join(' ')} }`;
const RESERVATIONS_TO_REGISTRATIONS = `{ event(eventId: 5001) { reservations(first: 5) { edges { node { attendee { registrations { id } } } } } } }`;
const RESERVATIONS_DIRECT = `{ event(eventId: 5001) { reservations(first: 5) { edges { node { attendee { attendeeId registrationEventId } } } } } }`;

describe.each(['apollo', 'hive'])('through %s gateway', (gateway) => {
  it('registration → event { name hotels } → reservations(first: 3) costs what the same query costs directly', async () => {
    const direct = await t.exec(directForEvents([5001, 5002, 5003]));
    expect(direct.errors).toBeUndefined();
    const directCalls = upstreamCalls();
    await readyToCount(t);

    const res = await through(gateway, REGISTRATION_TO_RESERVATIONS);
    expect(res.errors).toBeUndefined();
    const list = res.data!.registrations as {
      id: string;
      event: { name: string; hotels: unknown[]; reservations: { edges: unknown[] } };
    }[];
    expect(list).toHaveLength(records.length);
    expect(
      list.every((r) => r.event.name && r.event.hotels.length > 0 && r.event.reservations.edges.length === 3),
    ).toBe(true);
    expect(upstreamCalls()).toEqual(directCalls);
  });

  it('event → reservations(first: 5) → attendee { registrations } costs what the same query costs directly', async () => {
    await t.exec(RESERVATIONS_DIRECT);
    const directCalls = upstreamCalls();
    await readyToCount(t);

    const res = await through(gateway, RESERVATIONS_TO_REGISTRATIONS);
    expect(res.errors).toBeUndefined();
    const edges = (
      res.data!.event as {
        reservations: { edges: { node: { attendee: { registrations: { id: string }[] } | null } }[] };
      }
    ).reservations.edges;
    const linked = records.filter((r) => r.eventId === 5001);
    expect(linked.length).toBeGreaterThan(0);
    const ids = edges.flatMap((e) => e.node.attendee?.registrations.map((r) => r.id) ?? []);
    expect(ids.sort()).toEqual(linked.map((r) => r.id).sort());
    expect(upstreamCalls()).toEqual(directCalls);
  });

  // Review fault: the examples forwarded the client's credential to every subgraph, so a client's
  // long-lived API key reached other teams' services.
  it('forwards the client’s Authorization header to our subgraph only, not to the registration subgraph', async () => {
    ourAuthorizations.length = 0;
    registrations.authorizations.length = 0;
    const res = await through(gateway, `{ registrations { id event { name } } }`, 'Bearer client-token-1');
    expect(res.errors).toBeUndefined();
    expect(ourAuthorizations).toContain('Bearer client-token-1');
    expect(registrations.authorizations.length).toBeGreaterThan(0);
    expect(registrations.authorizations).not.toContain('Bearer client-token-1');
  });
});

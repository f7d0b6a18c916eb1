import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startHiveGateway } from '../../../examples/federation/hive-gateway.ts';
import {
  type RegistrationSubgraph,
  startRegistrationSubgraph,
} from '../../../examples/federation/registration-subgraph.ts';
import { loadConfig } from '../../../src/config/environment.ts';
import { estimateUpstreamCalls } from '../../../src/operations/cost.ts';
import { readyToCount, startGateway, type TestGateway } from '../../helpers/gateway.ts';
import { composeSupergraph } from './compose.ts';

/**
 * Demand control at the router: the real Hive Gateway (its CLI, `demandControl.maxCost` at our
 * default QUERY_MAX_UPSTREAM_CALLS, as docs/federating.md says) estimates an operation from
 * the `@cost`/`@listSize` our subgraph SDL carries, and refuses what our gateway would refuse as
 * too costly before anything reaches us, while the example pages of docs/clients.md ("Using the graph") pass.
 */

const MAX = loadConfig({ LOG_LEVEL: 'silent' }).maxUpstreamCallsPerOperation;
const clients = readFileSync(new URL('../../../docs/clients.md', import.meta.url), 'utf8');
const section = clients.slice(clients.indexOf('## Using the graph'), clients.indexOf('### Cursors and totalCount'));
const examples = [...section.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!);

let t: TestGateway;
let server: Server;
let registrations: RegistrationSubgraph;
let hive: Awaited<ReturnType<typeof startHiveGateway>>;
/** Requests that reached our subgraph. */
let reachedUs = 0;

beforeAll(async () => {
  t = await startGateway();
  server = createServer((req, res) => {
    reachedUs++;
    void t.gateway.yoga(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  registrations = await startRegistrationSubgraph([]);
  const { port } = server.address() as AddressInfo;
  const supergraph = composeSupergraph({
    reservations: `http://127.0.0.1:${port}/graphql`,
    registrations: registrations.url,
  });
  hive = await startHiveGateway(supergraph, { demandControlMaxCost: MAX });
}, 60_000);

afterAll(async () => {
  await hive?.close();
  await registrations?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await t?.close();
});

beforeEach(async () => {
  await readyToCount(t);
  reachedUs = 0;
});

interface Answer {
  data?: unknown;
  errors?: { message: string; extensions?: { code?: string } }[];
  extensions?: { cost?: { estimated: number; max: number } };
}

async function throughHive(query: string, variables?: Record<string, unknown>): Promise<Answer> {
  const res = await fetch(hive.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as Answer;
}

/** Every reservation's attendee's reservations: one lookup per record of the window. */
const perRecordLookups = (first: number) =>
  `{ event(eventId: 5001) { reservations(first: ${first}) { edges { node { reservationNumber attendee { reservations(eventId: 5001) { edges { node { reservationNumber } } } } } } } } }`;
/** A window's hotels that are more than their names: one gethotels per event for us, per record for the router. */
const hotelsOfWindow = `{ event(eventId: 5001) { reservations(first: 20) { edges { node { hotel { city } } } } } }`;

describe(`Hive Gateway with demandControl.maxCost ${MAX} (our QUERY_MAX_UPSTREAM_CALLS)`, () => {
  it('refuses an operation our gateway refuses as too costly, and nothing reaches our subgraph', async () => {
    const query = perRecordLookups(200);
    const direct = await t.exec(query);
    expect(direct.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COSTLY');
    await readyToCount(t);
    reachedUs = 0;

    const res = await throughHive(query);
    expect(res.errors?.[0]?.extensions?.code).toBe('COST_ESTIMATED_TOO_EXPENSIVE');
    // The refused root field is null: its subgraph request was never sent.
    expect(res.data).toEqual({ event: null });
    expect(reachedUs).toBe(0);
    expect(t.calls()).toEqual([]);
  });

  it.each(examples.map((e) => [e.split('\n')[0], e]))(
    'admits the docs/clients.md example %s',
    async (_title, query) => {
      const res = await throughHive(query);
      expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
      expect(res.data).toBeTruthy();
      expect(reachedUs).toBeGreaterThan(0);
      expect(res.extensions?.cost?.estimated).toBeLessThanOrEqual(MAX);
    },
  );

  it.each([
    ['an event page', examples[0]!],
    ['a page of reservations', examples[1]!],
    ['a window’s hotels', hotelsOfWindow],
    ['per-record lookups under a window of 50', perRecordLookups(50)],
    ['custom fields of every event', `{ customFields { name event { name } } }`],
  ])('estimates %s at least as high as our gateway does', async (_name, query) => {
    const res = await throughHive(query);
    const ours = estimateUpstreamCalls(parse(query), {});
    expect(ours).toBeGreaterThan(0);
    expect(res.extensions?.cost?.estimated).toBeGreaterThanOrEqual(ours);
  });
});

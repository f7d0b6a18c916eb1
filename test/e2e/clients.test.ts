import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildSchema, isInterfaceType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CLIENTS_DIR,
  clientExamplesOrSkip,
  installClientExamples,
  runProgram,
  runScript,
  startProgram,
} from '../helpers/client-examples.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { listen, pause, until } from '../helpers/subscriptions.ts';

/*
 * The client examples of examples/clients (docs/clients.md, "Clients"), installed from their own lock and run
 * as a frontend team runs them, against a gateway over the emulator on a real port: Apollo Client 4,
 * urql with graphcache, Relay (compiler and runtime), graphql-ws, graphql-sse and the codegen client
 * preset. Without examples/clients/node_modules and without a registry the suite is skipped with a
 * message; in CI (CI, or REQUIRE_CLIENT_EXAMPLES=1 as .ci/run sets) it always installs and runs.
 */
const AVAILABLE = clientExamplesOrSkip();
const ROOT = new URL('../../', import.meta.url).pathname;
const PAGE_SIZE = 5;
const ALLOWED_ORIGIN = 'https://app.example.com';

type Headers = Record<string, string>;
interface Request {
  method: string;
  url: string;
  headers: Headers;
  body?: { query?: string; extensions?: { persistedQuery?: { sha256Hash?: string } } };
  status: number;
  response?: { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };
}
interface Counted<T> {
  requests: number;
  result: T;
}
type NodeResult = {
  node: { __typename?: string; id: string; reservationNumber?: number; name?: string | null } | null;
};
/** What src/apollo.ts and src/urql.ts report. */
interface CacheReport {
  pages: { requests: number; list: number[]; pageInfo: { hasNextPage: boolean }; shown?: number };
  reservationNode: Counted<NodeResult>;
  eventNode: { first: Counted<NodeResult>; again: Counted<NodeResult> };
}
interface ApolloReport extends CacheReport {
  normalized: string[];
  post: Request;
  byGet: { data: NodeResult; request: Request };
}
interface UrqlReport extends CacheReport {
  sent: Request;
  withoutPreflight: { data: NodeResult | null; error?: string; request: Request };
  byPost: { data: NodeResult | null; error?: string; request: Request };
  warnings: string[];
}

let t: TestGateway;
let server: Awaited<ReturnType<typeof listen>>;
/** The event's first three pages as the gateway itself lists them. */
let expectedList: number[];
/** Types implementing Node in schema.graphql. */
let nodeTypes: string[];

/** Each program runs once, however many tests read its report. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let result: Promise<T> | undefined;
  return () => (result ??= make());
}
const apollo = once(() => runProgram<ApolloReport>('src/apollo.ts', { GATEWAY_URL: server.url, EVENT_ID: '5001' }));
const urql = once(() => runProgram<UrqlReport>('src/urql.ts', { GATEWAY_URL: server.url, EVENT_ID: '5001' }));

beforeAll(async () => {
  if (!AVAILABLE) return;
  installClientExamples();
  // Generated here, never committed: what a team's build runs before bundling.
  rmSync(join(CLIENTS_DIR, 'src/relay/__generated__'), { recursive: true, force: true });
  rmSync(join(CLIENTS_DIR, 'src/codegen/gql'), { recursive: true, force: true });
  runScript('relay');
  runScript('codegen');

  const schema = buildSchema(readFileSync(join(ROOT, 'schema.graphql'), 'utf8'));
  const node = schema.getType('Node');
  nodeTypes = isInterfaceType(node)
    ? schema
        .getPossibleTypes(node)
        .map((type) => type.name)
        .sort()
    : [];

  // A poll every minute: a change told within the test's two seconds was published, not polled.
  t = await startGateway({ rateLimit: false }, { CHANGES_POLL_INTERVAL_MS: '60000', CORS_ORIGINS: ALLOWED_ORIGIN });
  server = await listen(t);
  const first = await t.exec<{ event: { reservations: { edges: { node: { reservationNumber: number } }[] } } }, object>(
    `{ event(eventId: 5001) { reservations(first: ${3 * PAGE_SIZE}) { edges { node { reservationNumber } } } } }`,
  );
  expectedList = first.data!.event.reservations.edges.map((edge) => edge.node.reservationNumber);
}, 300_000);

afterAll(async () => {
  await server?.close();
  await t?.close();
});

const codesOf = (response: Request['response']) => response?.errors?.map((error) => error.extensions?.code);
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe.skipIf(!AVAILABLE)('client examples', () => {
  it('type-check against the generated Relay artifacts and typed documents (scalars mapped, none `any`)', () => {
    const tsc = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(CLIENTS_DIR, 'tsconfig.json')],
      { encoding: 'utf8' },
    );
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
    const types = readFileSync(join(CLIENTS_DIR, 'src/codegen/gql/graphql.ts'), 'utf8');
    const overview = /export type EventOverviewQuery = (.*);/.exec(types)?.[1];
    expect(overview).toContain('startDate: string | null'); // DateTime
    expect(overview).toContain('raw: JsonValue'); // JSON
    expect(overview).toMatch(/groupCodes: Array<\{ code: string, startDate: string \| null/); // Date
    expect(overview).not.toMatch(/\b(any|unknown)\b/);
  });

  describe('Apollo Client 4', () => {
    it('pages three pages of reservations into one list (relayStylePagination, no keyFields) and reads node(id:) from its cache', async () => {
      const { normalized, pages, reservationNode, eventNode } = await apollo();
      // Each object with a global id is an entity of its own, Attendee included, with no keyFields written.
      expect(normalized).toEqual(['Attendee', 'Event', 'Reservation']);
      expect(pages.requests).toBe(3);
      expect(pages.list).toEqual(expectedList);
      expect(pages.list).toHaveLength(3 * PAGE_SIZE);
      expect(pages.pageInfo.hasNextPage).toBe(true);
      // The watched query (what a component renders) shows the whole list.
      expect(pages.shown).toBe(3 * PAGE_SIZE);
      // A reservation of the second page, by its global id: from the cache.
      expect(reservationNode.requests).toBe(0);
      expect(reservationNode.result.node).toMatchObject({
        __typename: 'Reservation',
        reservationNumber: expectedList[PAGE_SIZE],
      });
      // The event's name was never read: one request, then the same answer from the cache.
      expect(eventNode.first.requests).toBe(1);
      expect(eventNode.first.result.node).toMatchObject({ __typename: 'Event', name: 'Paradigms Expo 2027' });
      expect(eventNode.again).toEqual({ requests: 0, result: eventNode.first.result });
    });

    it("APQ through PersistedQueryLink: the first request succeeds after the link's fallback, the next ones send only the hash", async () => {
      const report = await runProgram<{
        first: { data?: unknown; error?: string };
        second: { data?: unknown; error?: string };
        byGet: { data?: unknown; error?: string };
        firstRequests: number;
        posted: Request[];
        gotten: Request[];
      }>('src/apollo-apq.ts', { GATEWAY_URL: server.url, EVENT_ID: '5001' });
      expect(report.first.error).toBeUndefined();
      expect(report.first.data).toMatchObject({ event: { name: 'Paradigms Expo 2027', city: 'Hillsboro' } });
      // The link's protocol: the hash alone, PERSISTED_QUERY_NOT_FOUND, then the document with its hash.
      expect(report.firstRequests).toBe(2);
      const [hashOnly, withDocument, second] = report.posted;
      const hash = hashOnly!.body?.extensions?.persistedQuery?.sha256Hash;
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      expect(hashOnly!.body).not.toHaveProperty('query');
      expect(codesOf(hashOnly!.response)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
      expect(sha256(withDocument!.body!.query!)).toBe(hash);
      expect(withDocument!.status).toBe(200);
      // The second request: the hash only, answered.
      expect(report.posted).toHaveLength(3);
      expect(second!.body).not.toHaveProperty('query');
      expect(second!.body?.extensions?.persistedQuery?.sha256Hash).toBe(hash);
      expect(second!.status).toBe(200);
      expect(report.second).toEqual({ data: report.first.data });
      // By GET (useGETForHashedQueries), as a CDN would cache it: the hash in the URL, no document.
      expect(report.gotten).toHaveLength(1);
      const get = new URL(report.gotten[0]!.url);
      expect(report.gotten[0]!.method).toBe('GET');
      expect(get.searchParams.has('query')).toBe(false);
      expect(get.searchParams.get('extensions')).toContain(hash);
      expect(report.gotten[0]!.status).toBe(200);
      expect(report.byGet).toEqual({ data: report.first.data });
    });
  });

  it('urql with graphcache pages three pages into one list (relayPagination, no keys) and reads node(id:) from its cache', async () => {
    const { pages, reservationNode, eventNode, warnings } = await urql();
    expect(pages.requests).toBe(3);
    expect(pages.list).toEqual(expectedList);
    expect(reservationNode.requests).toBe(0);
    expect(reservationNode.result.node).toMatchObject({ reservationNumber: expectedList[PAGE_SIZE] });
    expect(eventNode.first.requests).toBe(1);
    expect(eventNode.first.result.node).toMatchObject({ name: 'Paradigms Expo 2027' });
    expect(eventNode.again).toEqual({ requests: 0, result: eventNode.first.result });
    // Every type with an id is normalised: graphcache warns of no entity it cannot key.
    expect(warnings).toEqual([]);
  });

  describe('Relay', () => {
    it('relay-compiler compiles a @refetchable fragment on every type implementing Node, each refetched through node(id:)', () => {
      expect(nodeTypes).toEqual([
        'Attendee',
        'CustomField',
        'Event',
        'EventQuestion',
        'GroupCode',
        'Hotel',
        'Reservation',
      ]);
      const generated = join(CLIENTS_DIR, 'src/relay/__generated__');
      for (const type of nodeTypes) {
        const artifact = join(generated, `${type}RefetchQuery.graphql.ts`);
        expect(existsSync(artifact), `${type}RefetchQuery`).toBe(true);
        expect(readFileSync(artifact, 'utf8')).toContain(String.raw`node(id: $id) {\n    __typename\n    ...${type}_`);
      }
      // The event's reservations are a @connection: its refetch query pages with count and cursor.
      expect(readFileSync(join(generated, 'Event_event.graphql.ts'), 'utf8')).toMatch(/"connection": \[/);
      expect(readFileSync(join(generated, 'EventRefetchQuery.graphql.ts'), 'utf8')).toContain(
        'reservations(first: $count, after: $cursor)',
      );
    });

    it('relay-runtime pages the @connection into one list and refetches a GroupCode (and every other Node type) through node(id:)', async () => {
      const report = await runProgram<{
        pageRequests: number[];
        list: number[];
        refetched: {
          type: string;
          id: string;
          requests: number;
          query: string;
          node: { __typename: string; id: string } | null;
          before: Record<string, unknown>;
          after: Record<string, unknown>;
        }[];
      }>('src/relay/relay.ts', { GATEWAY_URL: server.url, EVENT_ID: '5001' });
      expect(report.pageRequests).toEqual([1, 1]);
      expect(report.list).toEqual(expectedList);
      const groupCode = report.refetched.find((entry) => entry.type === 'GroupCode')!;
      expect(groupCode.query).toContain('node(id: $id)');
      expect(groupCode.node).toEqual({ __typename: 'GroupCode', id: groupCode.id });
      expect(groupCode.after).toEqual(groupCode.before);
      expect(groupCode.after).toMatchObject({
        code: expect.stringMatching(/^[A-Z0-9]+$/),
        startDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      });
      expect(report.refetched.map((entry) => entry.type).sort()).toEqual(nodeTypes);
      for (const entry of report.refetched) {
        expect(entry.requests, entry.type).toBe(1);
        expect(entry.node, entry.type).toEqual({ __typename: entry.type, id: entry.id });
      }
    });
  });

  describe.each([
    ['graphql-ws', 'src/subscribe-ws.ts', 760_001],
    ['graphql-sse', 'src/subscribe-sse.ts', 760_002],
  ])('a %s subscriber', (_client, program, reservationNumber) => {
    it('receives the CHANGED of a setCustomFieldValue made through the gateway within 2 s (no poll), once', async () => {
      type Line = {
        receivedAt: number;
        result: {
          data?: {
            reservationChanged: {
              kind: string;
              reservation: { reservationNumber: number; customFieldValues: { customFieldId: number; value: string }[] };
            };
          };
        };
      };
      const subscriber = startProgram<Line>(program, { GATEWAY_URL: server.url, EVENT_ID: '5002' });
      try {
        // Subscribed once the feed has its member and its baseline read (event 5002: one page) was answered.
        await until(
          () => t.gateway.changeFeeds.active().some((feed) => feed.eventId === 5002 && feed.members > 0),
          15_000,
        ).catch((error) => {
          throw new Error(`${error.message}; the subscriber said: ${subscriber.errors()}`);
        });
        await until(
          () => t.calls().some((call) => call.endpoint === 'getreservation' && String(call.params.eventId) === '5002'),
          15_000,
        );
        await pause(300);
        const value = `CC-${reservationNumber}`;
        const set = await t.exec(
          `mutation { setCustomFieldValue(input: { customFieldId: 2, value: "${value}", reservationNumber: ${reservationNumber}, eventId: 5002 }) { value } }`,
        );
        expect(set.errors).toBeUndefined();
        const ours = () =>
          subscriber.lines.filter(
            (line) => line.result.data?.reservationChanged.reservation.reservationNumber === reservationNumber,
          );
        await until(() => ours().length > 0, 2_000).catch(() => {
          throw new Error(
            `no change of ${reservationNumber} within 2 s; received ${JSON.stringify(subscriber.lines)}; ${subscriber.errors()}`,
          );
        });
        await pause(500);
        expect(ours()).toHaveLength(1);
        const [change] = ours();
        expect(change!.result.data!.reservationChanged.kind).toBe('CHANGED');
        expect(change!.result.data!.reservationChanged.reservation.customFieldValues).toContainEqual(
          expect.objectContaining({ customFieldId: 2, value }),
        );
      } finally {
        await subscriber.stop();
      }
    });
  });

  it('the codegen client preset: its persisted-documents.json feeds TRUSTED_DOCUMENTS_FILE, the document runs by its id and its text is refused', async () => {
    const file = join(CLIENTS_DIR, 'src/codegen/gql/persisted-documents.json');
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
    const [[id, document]] = Object.entries(manifest) as [[string, string]];
    expect(Object.keys(manifest)).toHaveLength(1);
    expect(id).toBe(`sha256:${sha256(document)}`);
    expect(document).toMatch(/^query EventOverview\(/);

    const trusted = await startGateway({ rateLimit: false }, { TRUSTED_DOCUMENTS_FILE: file });
    const trustedServer = await listen(trusted);
    try {
      const report = await runProgram<{
        documentId: string;
        byId: { status: number; data?: { event: { name: string; raw: unknown } } };
        startYear: number;
        byText: { status: number; errors?: { extensions?: { code?: string } }[] };
      }>('src/codegen/persisted.ts', { GATEWAY_URL: trustedServer.url, EVENT_ID: '5001' });
      expect(report.documentId).toBe(id);
      expect(report.byId.status).toBe(200);
      expect(report.byId.data?.event).toMatchObject({ name: 'Paradigms Expo 2027', raw: { eventId: 5001 } });
      expect(report.startYear).toBe(2027);
      expect(report.byText.status).toBe(400);
      expect(report.byText.errors?.map((error) => error.extensions?.code)).toEqual(['BAD_USER_INPUT']);
    } finally {
      await trustedServer.close();
      await trusted.close();
    }
  });

  describe('what the clients send across sites (docs/settings.md, "Cross-site requests"; docs/clients.md, "Clients")', () => {
    it('Apollo Client 4 sends content-type: application/json on POST and on GET, and no Apollo-Require-Preflight: both pass the CSRF check', async () => {
      const { post, byGet } = await apollo();
      expect(post).toMatchObject({ method: 'POST', status: 200 });
      expect(post.headers['content-type']).toBe('application/json');
      expect(byGet.request).toMatchObject({ method: 'GET', status: 200 });
      expect(byGet.request.headers['content-type']).toBe('application/json');
      for (const headers of [post.headers, byGet.request.headers]) {
        expect(Object.keys(headers)).not.toContain('apollo-require-preflight');
        expect(Object.keys(headers).sort()).toEqual(['accept', 'content-type']);
      }
    });

    it('urql sends queries by GET without a content-type: refused (403) unless it sends GraphQL-Preflight; its POST carries application/json', async () => {
      const { sent, withoutPreflight, byPost } = await urql();
      expect(withoutPreflight.request).toMatchObject({ method: 'GET', status: 403 });
      expect(Object.keys(withoutPreflight.request.headers)).toEqual(['accept']);
      expect(withoutPreflight.error).toContain('GraphQL-Preflight');
      expect(sent).toMatchObject({ method: 'GET', status: 200, headers: { 'graphql-preflight': '1' } });
      expect(byPost.request).toMatchObject({
        method: 'POST',
        status: 200,
        headers: { 'content-type': 'application/json' },
      });
    });

    it("a page of a CORS_ORIGINS origin is let through the browser's preflight for those headers; another origin is not", async () => {
      const { post, byGet } = await apollo();
      for (const request of [post, byGet.request]) {
        // A browser asks first for the headers that are not CORS-safelisted (content-type: application/json is not).
        const asked = Object.keys(request.headers).filter((name) => name !== 'accept');
        const preflight = (origin: string) =>
          fetch(server.url, {
            method: 'OPTIONS',
            headers: {
              origin,
              'access-control-request-method': request.method,
              'access-control-request-headers': asked.join(','),
            },
          });
        const allowed = await preflight(ALLOWED_ORIGIN);
        expect(allowed.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
        expect(allowed.headers.get('access-control-allow-methods')).toContain(request.method);
        expect(
          allowed.headers
            .get('access-control-allow-headers')
            ?.toLowerCase()
            .split(/\s*,\s*/),
        ).toEqual(expect.arrayContaining(asked));
        const other = await preflight('https://elsewhere.example');
        expect(other.headers.get('access-control-allow-origin')).toBeNull();
      }
    });
  });
});

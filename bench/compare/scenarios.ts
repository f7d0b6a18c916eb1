import type { Emulator } from './emulator.ts';
import type { Target } from './load.ts';
import type { SystemName } from './systems.ts';

/**
 * The side-by-side scenarios (docs/development.md, "Benchmarks"), written once per system in that system's own GraphQL (or as the REST calls
 * a client would make directly). Each asks for the same data; how many upstream calls that costs is
 * what differs.
 */

export const EVENT = 5001;
/** Event 5001's reservations: 25 full service pages and one of 600. */
export const SERVICE_PAGES = 26;

export interface Context {
  /** The system's GraphQL endpoint (for `direct`: none, the emulator is used). */
  url: string;
  emulator: Emulator;
}

/** A load scenario: the same request, or a rotation of them, at 10 and 50 connections. */
export interface LoadScenario {
  kind: 'load';
  id: string;
  title: string;
  targets: Partial<Record<SystemName, (ctx: Context) => Promise<Target>>>;
}

export interface WalkResult {
  ms: number;
  records: number;
}

/** A walk: every reservation of the event, page after page, one operation after the other. */
export interface WalkScenario {
  kind: 'walk';
  id: string;
  title: string;
  walks: Partial<Record<SystemName, (ctx: Context) => Promise<WalkResult>>>;
}

const json = { 'content-type': 'application/json' };
const gqlBody = (query: string, variables?: Record<string, unknown>) =>
  JSON.stringify(variables ? { query, variables } : { query });
const gqlTarget = (ctx: Context, ...queries: string[]): Target => ({
  url: ctx.url,
  headers: json,
  bodies: queries.map((q) => gqlBody(q)),
});

/** Mesh users pass the service token in a header, which Mesh turns into the `token` parameter. */
const meshTarget = async (ctx: Context, ...queries: string[]): Promise<Target> => ({
  url: ctx.url,
  headers: { ...json, 'x-service-token': await ctx.emulator.token() },
  bodies: queries.map((q) => gqlBody(q)),
});

const restTarget = async (ctx: Context, endpoint: string, ...params: string[]): Promise<Target> => {
  const token = await ctx.emulator.token();
  return {
    url: `${ctx.emulator.url}/api/v102/${endpoint}`,
    headers: { 'user-agent': 'bench/1', 'content-type': 'application/x-www-form-urlencoded' },
    bodies: params.map((p) => `token=${token}&${p}`),
  };
};

const pages = Array.from({ length: SERVICE_PAGES }, (_, i) => i + 1);

const OURS_RESERVATION_1000 = `node { reservationNumber status arrivalDate contact { firstName lastName email } rooms { roomType guests { firstName lastName } } }`;
const NAIVE_RESERVATION_1000 = `reservationNumber status arrivalDate contact { firstName lastName email } rooms { roomType guests { firstName lastName } }`;
const MESH_RESERVATION_1000 = `... on Reservation { reservationNumber status arrivalDate contact { firstName lastName email } rooms { roomType guests { firstName lastName } } }`;

export const S1: LoadScenario = {
  kind: 'load',
  id: 'S1',
  title: 'one event by id',
  targets: {
    ours: async (ctx) => gqlTarget(ctx, `{ event(eventId: ${EVENT}) { eventId name city startDate } }`),
    'ours-cache-off': async (ctx) => gqlTarget(ctx, `{ event(eventId: ${EVENT}) { eventId name city startDate } }`),
    naive: async (ctx) => gqlTarget(ctx, `{ event(eventId: ${EVENT}) { eventId name city startDate } }`),
    mesh: (ctx) =>
      meshTarget(ctx, `{ getevent(input: { eventId: ${EVENT} }) { ... on Event { eventId name city startDate } } }`),
    ceiling: async (ctx) => gqlTarget(ctx, '{ __typename }'),
    direct: (ctx) => restTarget(ctx, 'getevent', `eventId=${EVENT}`),
  },
};

export const S2: LoadScenario = {
  kind: 'load',
  id: 'S2',
  title: 'an event, its hotels, its group codes with their hotel names',
  targets: {
    ours: async (ctx) =>
      gqlTarget(
        ctx,
        `{ event(eventId: ${EVENT}) { name hotels { hotelId name } groupCodes { code name hotel { name } } } }`,
      ),
    naive: async (ctx) =>
      gqlTarget(
        ctx,
        `{ event(eventId: ${EVENT}) { name hotels { hotelId name } groupCodes { code name hotel { name } } } }`,
      ),
    mesh: (ctx) =>
      meshTarget(
        ctx,
        `{ getevent(input: { eventId: ${EVENT} }) { ... on Event { name } } gethotels(input: { eventId: ${EVENT} }) { ... on Hotel { hotelId name } } getgroupcodes(input: { eventId: ${EVENT} }) { ... on GroupCode { groupCode name hotels(eventId: ${EVENT}) { ... on Hotel { name } } } } }`,
      ),
  },
};

export const S3: LoadScenario = {
  kind: 'load',
  id: 'S3',
  title: '100 reservations with their hotel names',
  targets: {
    ours: async (ctx) =>
      gqlTarget(
        ctx,
        `{ event(eventId: ${EVENT}) { reservations(first: 100) { edges { node { reservationNumber hotel { name } } } } } }`,
      ),
    naive: async (ctx) =>
      gqlTarget(
        ctx,
        `{ event(eventId: ${EVENT}) { reservations(first: 100, page: 1) { nodes { reservationNumber hotel { name } } } } }`,
      ),
    // The service pages by 1000: a Mesh client reads the page and keeps 100; the hotel names come from hotelName.
    mesh: (ctx) =>
      meshTarget(
        ctx,
        `{ getreservation(input: { eventId: ${EVENT}, page: 1 }) { ... on Reservation { reservationNumber hotelName } } }`,
      ),
    direct: (ctx) => restTarget(ctx, 'getreservation', `eventId=${EVENT}&page=1`),
  },
};

export const S4: LoadScenario = {
  kind: 'load',
  id: 'S4',
  title: '1000 reservations with contact, rooms and guests, the same page',
  targets: {
    ours: async (ctx) =>
      gqlTarget(
        ctx,
        `{ event(eventId: ${EVENT}) { reservations(first: 1000) { edges { ${OURS_RESERVATION_1000} } } } }`,
      ),
    // The same page again and again is a response-cache hit for ours: the cache-off run shows what building an answer costs.
    'ours-cache-off': async (ctx) =>
      gqlTarget(
        ctx,
        `{ event(eventId: ${EVENT}) { reservations(first: 1000) { edges { ${OURS_RESERVATION_1000} } } } }`,
      ),
    naive: async (ctx) =>
      gqlTarget(
        ctx,
        `{ event(eventId: ${EVENT}) { reservations(first: 1000, page: 1) { nodes { ${NAIVE_RESERVATION_1000} } } } }`,
      ),
    mesh: (ctx) =>
      meshTarget(ctx, `{ getreservation(input: { eventId: ${EVENT}, page: 1 }) { ${MESH_RESERVATION_1000} } }`),
    direct: (ctx) => restTarget(ctx, 'getreservation', `eventId=${EVENT}&page=1`),
  },
};

export const S4B: LoadScenario = {
  kind: 'load',
  id: 'S4b',
  title: '1000 reservations with contact, rooms and guests, a different page per request',
  targets: {
    ours: async (ctx) => {
      const cursors = await oursPageCursors(ctx.url);
      return {
        url: ctx.url,
        headers: json,
        bodies: cursors.map((after) =>
          gqlBody(
            `query ($after: String) { event(eventId: ${EVENT}) { reservations(first: 1000, after: $after) { edges { ${OURS_RESERVATION_1000} } } } }`,
            { after },
          ),
        ),
      };
    },
    naive: async (ctx) =>
      gqlTarget(
        ctx,
        ...pages.map(
          (p) =>
            `{ event(eventId: ${EVENT}) { reservations(first: 1000, page: ${p}) { nodes { ${NAIVE_RESERVATION_1000} } } } }`,
        ),
      ),
    mesh: (ctx) =>
      meshTarget(
        ctx,
        ...pages.map(
          (p) => `{ getreservation(input: { eventId: ${EVENT}, page: ${p} }) { ${MESH_RESERVATION_1000} } }`,
        ),
      ),
    direct: (ctx) => restTarget(ctx, 'getreservation', ...pages.map((p) => `eventId=${EVENT}&page=${p}`)),
  },
};

/** The `after` of each 1000-record window of our gateway (null for the first), found by walking it once. */
async function oursPageCursors(url: string): Promise<(string | null)[]> {
  const cursors: (string | null)[] = [null];
  for (;;) {
    const page = await postGraphQL<{
      event: { reservations: { pageInfo: { hasNextPage: boolean; endCursor: string } } };
    }>(
      url,
      {},
      `query ($after: String) { event(eventId: ${EVENT}) { reservations(first: 1000, after: $after) { pageInfo { hasNextPage endCursor } } } }`,
      { after: cursors.at(-1) },
    );
    const info = page.event.reservations.pageInfo;
    if (!info.hasNextPage) return cursors;
    cursors.push(info.endCursor);
  }
}

/**
 * S5 over our gateway: the reservations of `eventId`, 1000 a request, one request after the other,
 * for at most `pages` requests; the records received.
 */
export async function walkOurs(url: string, pages = Number.POSITIVE_INFINITY, eventId = EVENT): Promise<number> {
  let after: string | null = null;
  let records = 0;
  for (let page = 1; page <= pages; page++) {
    type Page = {
      event: { reservations: { pageInfo: { hasNextPage: boolean; endCursor: string }; edges: unknown[] } };
    };
    const answer: Page = await postGraphQL<Page>(
      url,
      {},
      `query ($after: String) { event(eventId: ${eventId}) { reservations(first: 1000, after: $after) { pageInfo { hasNextPage endCursor } edges { node { reservationNumber status arrivalDate departureDate } } } } }`,
      { after },
    );
    records += answer.event.reservations.edges.length;
    if (!answer.event.reservations.pageInfo.hasNextPage) break;
    after = answer.event.reservations.pageInfo.endCursor;
  }
  return records;
}

export const S5: WalkScenario = {
  kind: 'walk',
  id: 'S5',
  title: `all reservations of event ${EVENT}, 1000 at a time, one request after the other`,
  walks: {
    ours: (ctx) => timed(() => walkOurs(ctx.url)),
    naive: (ctx) =>
      timed(async () => {
        let records = 0;
        for (let p = 1; ; p++) {
          const page = await postGraphQL<{ event: { reservations: { hasNextPage: boolean; nodes: unknown[] } } }>(
            ctx.url,
            {},
            `{ event(eventId: ${EVENT}) { reservations(first: 1000, page: ${p}) { hasNextPage nodes { reservationNumber status arrivalDate departureDate } } } }`,
          );
          records += page.event.reservations.nodes.length;
          if (!page.event.reservations.hasNextPage) return records;
        }
      }),
    // Without a page count, a Mesh client stops at the first short page.
    mesh: async (ctx) => {
      const headers = { 'x-service-token': await ctx.emulator.token() };
      return timed(async () => {
        let records = 0;
        for (let p = 1; ; p++) {
          const page = await postGraphQL<{ getreservation: unknown[] }>(
            ctx.url,
            headers,
            `{ getreservation(input: { eventId: ${EVENT}, page: ${p} }) { ... on Reservation { reservationNumber status arrivalDate departureDate } } }`,
          );
          records += page.getreservation.length;
          if (page.getreservation.length < 1000) return records;
        }
      });
    },
    direct: async (ctx) => {
      const token = await ctx.emulator.token();
      return timed(async () => {
        let records = 0;
        for (let p = 1; ; p++) {
          const res = await fetch(`${ctx.emulator.url}/api/v102/getreservation`, {
            method: 'POST',
            headers: { 'user-agent': 'bench/1', 'content-type': 'application/x-www-form-urlencoded' },
            body: `token=${token}&eventId=${EVENT}&page=${p}`,
          });
          const rows = (await res.json()) as unknown[];
          records += rows.length;
          if (rows.length < 1000) return records;
        }
      });
    },
  },
};

export const LOAD_SCENARIOS = [S1, S2, S3, S4, S4B];

async function timed(walk: () => Promise<number>): Promise<WalkResult> {
  const t0 = performance.now();
  const records = await walk();
  return { ms: performance.now() - t0, records };
}

/** One GraphQL request; its data, or an Error carrying the first error's message. */
export async function postGraphQL<T>(
  url: string,
  headers: Record<string, string>,
  query: string,
  variables?: Record<string, unknown>,
): Promise<T> {
  const res = await fetch(url, { method: 'POST', headers: { ...json, ...headers }, body: gqlBody(query, variables) });
  const body = (await res.json()) as { data?: T; errors?: { message: string }[] };
  if (body.errors?.length || !body.data) throw new Error(`${res.status}: ${body.errors?.[0]?.message ?? 'no data'}`);
  return body.data;
}

// The hurried peer of the side-by-side benchmark: what a team writes in an afternoon. Plain
// resolvers call the REST service per field with fetch: no loaders, no cache, no budget, one
// authenticate per GraphQL request. Its schema is a subset shaped like the gateway's, except that
// reservations are read as numbered pages of `first` records (the service's own paging idea).
import { createServer } from 'node:http';
import { GraphQLError } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';

const BASE = process.env.UPSTREAM_BASE_URL ?? 'http://127.0.0.1:4010';
const KEY = process.env.UPSTREAM_KEY ?? 'demo-key-1001';
const LICENSEE = process.env.UPSTREAM_SYSTEM_IDENTIFIER ?? '1001';
const SERVICE_PAGE = 1000;

const typeDefs = /* GraphQL */ `
  type Query {
    event(eventId: Int!): Event
  }
  type Event {
    eventId: Int!
    name: String
    city: String
    state: String
    startDate: String
    endDate: String
    hotels: [Hotel!]!
    groupCodes: [GroupCode!]!
    "Page number \`page\` (from 1) of \`first\` reservations."
    reservations(first: Int = 50, page: Int = 1): ReservationPage!
  }
  type Hotel {
    hotelId: Int!
    name: String
    city: String
    starRating: Int
  }
  type GroupCode {
    code: String!
    name: String
    rooms: Int
    hotel: Hotel
  }
  type ReservationPage {
    totalCount: Int!
    hasNextPage: Boolean!
    nodes: [Reservation!]!
  }
  type Reservation {
    reservationNumber: Int!
    status: String
    arrivalDate: String
    departureDate: String
    hotel: Hotel
    contact: Contact
    rooms: [Room!]!
  }
  type Contact {
    firstName: String
    lastName: String
    email: String
    phone: String
  }
  type Room {
    roomId: Int
    roomType: String
    status: String
    guests: [Guest!]!
  }
  type Guest {
    firstName: String
    lastName: String
  }
`;

/** One REST call; an error answer becomes a GraphQL error carrying the service's code. */
async function call(endpoint, params) {
  const res = await fetch(`${BASE}/api/v102/${endpoint}`, {
    method: 'POST',
    headers: { 'user-agent': 'naive-peer/1', 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])),
  });
  const body = await res.json().catch(() => null);
  if (!res.ok || body?.error) {
    const code = body?.error?.code ?? `HTTP_${res.status}`;
    throw new GraphQLError(`${endpoint} failed: ${code}`, { extensions: { code } });
  }
  return body;
}

/** The token of this GraphQL request, asked for once per request (no reuse across requests). */
function token(context) {
  context.token ??= call('authenticate', { key: KEY, systemIdentifier: LICENSEE }).then((b) => b.token);
  return context.token;
}

const withToken = async (context, endpoint, params) => call(endpoint, { token: await token(context), ...params });

async function hotelById(context, eventId, hotelId) {
  const [hotel] = await withToken(context, 'gethotels', { eventId, hotelId });
  return hotel ?? null;
}

async function pageCount(context, eventId) {
  return (await withToken(context, 'getreservationpagecount', { eventId })).pageCount;
}

const resolvers = {
  Query: {
    event: (_, { eventId }, context) => withToken(context, 'getevent', { eventId }),
  },
  Event: {
    hotels: (event, _, context) => withToken(context, 'gethotels', { eventId: event.eventId }),
    groupCodes: async (event, _, context) =>
      (await withToken(context, 'getgroupcodes', { eventId: event.eventId })).map((g) => ({
        ...g,
        eventId: event.eventId,
      })),
    reservations: (event, { first, page }) => ({ eventId: event.eventId, first, page }),
  },
  GroupCode: {
    code: (g) => g.groupCode,
    hotel: (g, _, context) => hotelById(context, g.eventId, g.hotelId),
  },
  ReservationPage: {
    // Records `(page - 1) * first` to `page * first`, from the one or two service pages they lie on.
    nodes: async ({ eventId, first, page }, _, context) => {
      const start = (page - 1) * first;
      const records = [];
      for (let p = Math.floor(start / SERVICE_PAGE) + 1; (p - 1) * SERVICE_PAGE < start + first; p++) {
        const rows = await withToken(context, 'getreservation', { eventId, page: p });
        records.push(...rows.map((r, i) => ({ ...r, index: (p - 1) * SERVICE_PAGE + i })));
        if (rows.length < SERVICE_PAGE) break;
      }
      return records.filter((r) => r.index >= start && r.index < start + first);
    },
    hasNextPage: async ({ eventId, first, page }, _, context) =>
      page * first < (await pageCount(context, eventId)) * SERVICE_PAGE,
    // The page count and the last page, as the service offers no count of records.
    totalCount: async ({ eventId }, _, context) => {
      const pages = await pageCount(context, eventId);
      if (pages === 0) return 0;
      const last = await withToken(context, 'getreservation', { eventId, page: pages });
      return (pages - 1) * SERVICE_PAGE + last.length;
    },
  },
  Reservation: {
    hotel: (r, _, context) => hotelById(context, r.eventId, r.hotelId),
    rooms: (r) => r.rooms ?? [],
  },
  Room: {
    guests: (room) => room.guests ?? [],
  },
};

const yoga = createYoga({ schema: createSchema({ typeDefs, resolvers }), graphiql: false, logging: 'warn' });
const server = createServer(yoga);
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address();
  console.log(`naive peer ready at http://127.0.0.1:${port}/graphql`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));

/**
 * urql with graphcache over the gateway: an event's reservations paged three times into one list by
 * `relayPagination`, `node(id:)` answered from the normalised cache, and what its GET requests need.
 * graphcache knows the schema (interfaces, nullability), so it normalises every type with an `id`
 * (`<__typename>:<id>`) with no `keys` written and warns of nothing.
 *
 * urql sends queries by GET (`preferGetMethod` defaults to 'within-url-limit') with no content-type:
 * the gateway's CSRF check then wants a preflight header (docs/settings.md, "Cross-site requests"), so the
 * client sends `GraphQL-Preflight: 1` with every request.
 *
 *   node --import tsx src/urql.ts http://127.0.0.1:4000/graphql
 */
import { type AnyVariables, Client, type DocumentInput, fetchExchange, gql, type OperationResult } from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import { relayPagination } from '@urql/exchange-graphcache/extras';
import { authorization, GATEWAY_URL, recordingFetch, report, type SentRequest } from './gateway.ts';
import { introspection, nodeTypes } from './schema.ts';

const EVENT_ID = Number(process.env.EVENT_ID ?? 5001);
const PAGE_SIZE = 5;

interface ReservationsData {
  event: {
    id: string;
    reservations: {
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
      edges: {
        cursor: string;
        node: {
          id: string;
          reservationNumber: number;
          status: string | null;
          attendee: { id: string; attendeeId: string; registrationEventId: string } | null;
        };
      }[];
    };
  } | null;
}

const RESERVATIONS = gql<ReservationsData, { eventId: number; first: number; after?: string | null }>`
  query Reservations($eventId: Int!, $first: Int!, $after: String) {
    event(eventId: $eventId) {
      id
      reservations(first: $first, after: $after) {
        pageInfo { hasNextPage endCursor }
        edges { cursor node { id reservationNumber status attendee { id attendeeId registrationEventId } } }
      }
    }
  }
`;

const NODE = gql<
  { node: { __typename: string; id: string; reservationNumber?: number; name?: string | null } | null },
  { id: string }
>`
  query Node($id: ID!) {
    node(id: $id) {
      id
      ... on Reservation { reservationNumber status }
      ... on Event { name }
    }
  }
`;

const warnings: string[] = [];
const warn = console.warn;
console.warn = (...args: unknown[]) => void warnings.push(args.map(String).join(' '));

const sent: SentRequest[] = [];
const client = new Client({
  url: GATEWAY_URL,
  fetch: recordingFetch(sent),
  fetchOptions: { headers: { ...authorization, 'graphql-preflight': '1' } },
  exchanges: [
    cacheExchange({
      schema: introspection,
      resolvers: {
        Event: { reservations: relayPagination() },
        Query: {
          // node(id:) of an object already in the cache, whatever query brought it there; undefined
          // (not in the cache) lets graphcache ask the gateway.
          node: (_parent, args, cache) =>
            nodeTypes
              .map((__typename) => cache.keyOfEntity({ __typename, id: args.id as string }))
              .find((key) => key && cache.resolve(key, 'id')),
        },
      },
    }),
    fetchExchange,
  ],
});

/**
 * The first complete result of a query. With schema awareness graphcache may first hand out a
 * partial result from the cache (`stale`, a request on its way): a component would render both.
 */
function settled<Data, Variables extends AnyVariables>(
  query: DocumentInput<Data, Variables>,
  variables: Variables,
  context = {},
): Promise<OperationResult<Data, Variables>> {
  return new Promise((resolve) => {
    const { unsubscribe } = client.query(query, variables, context).subscribe((result) => {
      if (result.stale) return;
      queueMicrotask(() => unsubscribe());
      resolve(result);
    });
  });
}

async function counted<T>(step: () => Promise<T>): Promise<{ requests: number; result: T }> {
  const before = sent.length;
  const result = await step();
  return { requests: sent.length - before, result };
}

// Three pages: relayPagination merges every page of the list into the one result.
const pages = await counted(async () => {
  let after: string | null | undefined;
  let result: OperationResult<ReservationsData> | undefined;
  for (let page = 0; page < 3; page++) {
    result = await settled(RESERVATIONS, { eventId: EVENT_ID, first: PAGE_SIZE, after });
    if (result.error) throw result.error;
    after = result.data?.event?.reservations.pageInfo.endCursor;
  }
  return result!.data!;
});
const edges = pages.result.event?.reservations.edges ?? [];
const second = edges[PAGE_SIZE];
if (!second || !pages.result.event) throw new Error('fewer than two pages of reservations');

// A reservation of the second page by its global id: the cache has it, no request.
const reservationNode = await counted(async () => (await settled(NODE, { id: second.node.id })).data);
// The event by its id: its name was never read, so the first read asks the gateway, the second does not.
const eventId = pages.result.event.id;
const eventFirst = await counted(async () => (await settled(NODE, { id: eventId })).data);
const eventAgain = await counted(async () => (await settled(NODE, { id: eventId })).data);

// The same query from clients as urql makes them by default: by GET without the preflight header
// (refused), and by POST (preferGetMethod: false), which carries content-type: application/json.
async function plain(options: { preferGetMethod?: false }) {
  const log: SentRequest[] = [];
  const other = new Client({
    url: GATEWAY_URL,
    fetch: recordingFetch(log),
    fetchOptions: { headers: authorization },
    exchanges: [fetchExchange],
    ...options,
  });
  const result = await other.query(NODE, { id: eventId }).toPromise();
  return {
    data: result.data ?? null,
    error: result.error?.message,
    request: log[0] && { method: log[0].method, headers: log[0].headers, status: log[0].status },
  };
}
const withoutPreflight = await plain({});
const byPost = await plain({ preferGetMethod: false });

console.warn = warn;
report({
  pages: {
    requests: pages.requests,
    list: edges.map((edge) => edge.node.reservationNumber),
    pageInfo: pages.result.event.reservations.pageInfo,
  },
  reservationNode,
  eventNode: { first: eventFirst, again: eventAgain },
  sent: sent[0] && { method: sent[0].method, headers: sent[0].headers, status: sent[0].status },
  withoutPreflight,
  byPost,
  warnings,
});

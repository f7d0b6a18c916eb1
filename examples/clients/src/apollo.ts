/**
 * Apollo Client 4 over the gateway: an event's reservations paged three times into one list by
 * `relayStylePagination`, `node(id:)` answered from the normalised cache, and the headers its
 * POST and GET requests carry. Every type with an `id` is normalised as `<__typename>:<id>` with
 * no `keyFields` written (the ids are global: unique across types).
 *
 *   node --import tsx src/apollo.ts http://127.0.0.1:4000/graphql
 */
import { ApolloClient, gql, HttpLink, InMemoryCache, type TypedDocumentNode } from '@apollo/client';
import { relayStylePagination } from '@apollo/client/utilities';
import { authorization, GATEWAY_URL, recordingFetch, report, type SentRequest } from './gateway.ts';
import { nodeTypes, possibleTypes } from './schema.ts';

const EVENT_ID = Number(process.env.EVENT_ID ?? 5001);
const PAGE_SIZE = 5;

interface Reservation {
  __typename: 'Reservation';
  id: string;
  reservationNumber: number;
  status: string | null;
  attendee: { __typename: 'Attendee'; id: string; attendeeId: string; registrationEventId: string } | null;
}
interface ReservationsData {
  event: {
    id: string;
    reservations: {
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
      edges: { cursor: string; node: Reservation }[];
    };
  } | null;
}

const RESERVATIONS: TypedDocumentNode<ReservationsData, { eventId: number; first: number; after?: string | null }> =
  gql`
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

const NODE: TypedDocumentNode<
  {
    node: {
      __typename: string;
      id: string;
      reservationNumber?: number;
      status?: string | null;
      name?: string | null;
    } | null;
  },
  { id: string }
> = gql`
  query Node($id: ID!) {
    node(id: $id) {
      id
      ... on Reservation { reservationNumber status }
      ... on Event { name }
    }
  }
`;

const cache = new InMemoryCache({
  possibleTypes,
  typePolicies: {
    // `filter` tells lists apart; `first`, `after`, `last`, `before` only page through one list.
    Event: { fields: { reservations: relayStylePagination(['filter']) } },
    Query: {
      fields: {
        // node(id:) of an object already in the cache, whatever query brought it there.
        node: {
          read(existing, { args, toReference, canRead }) {
            if (existing || typeof args?.id !== 'string') return existing;
            return nodeTypes.map((__typename) => toReference({ __typename, id: args.id })).find((ref) => canRead(ref));
          },
        },
      },
    },
  },
});

const sent: SentRequest[] = [];
const link = new HttpLink({ uri: GATEWAY_URL, headers: authorization, fetch: recordingFetch(sent) });
const client = new ApolloClient({ link, cache });

/** Runs `step` and says how many requests it sent. */
async function counted<T>(step: () => Promise<T>): Promise<{ requests: number; result: T }> {
  const before = sent.length;
  const result = await step();
  return { requests: sent.length - before, result };
}

// Three pages, the way a "load more" button does it: one watched query, fetchMore with the cursor.
const watched = client.watchQuery({ query: RESERVATIONS, variables: { eventId: EVENT_ID, first: PAGE_SIZE } });
// What a component rendering the watched query shows: the length of the list of its latest result.
let shown = 0;
let showAll = () => {};
const allShown = new Promise<void>((resolve) => (showAll = resolve));
const watching = watched.subscribe((result) => {
  shown = result.data?.event?.reservations?.edges?.length ?? 0;
  if (shown === 3 * PAGE_SIZE) showAll();
});
const pages = await counted(async () => {
  let data = (await watched.refetch()).data;
  for (let more = 0; more < 2; more++) {
    data = (await watched.fetchMore({ variables: { after: data?.event?.reservations.pageInfo.endCursor } })).data;
  }
  return client.readQuery({ query: RESERVATIONS, variables: { eventId: EVENT_ID, first: PAGE_SIZE } });
});
// The cache tells its watchers in a batch after the writes: wait for it (a second at most).
await Promise.race([allShown, new Promise((resolve) => setTimeout(resolve, 1000))]);
watching.unsubscribe();
const edges = pages.result?.event?.reservations.edges ?? [];

// A reservation of the second page by its global id: the cache has it, no request.
const second = edges[PAGE_SIZE];
if (!second || !pages.result?.event) throw new Error('fewer than two pages of reservations');
const reservationNode = await counted(
  async () => (await client.query({ query: NODE, variables: { id: second.node.id } })).data,
);
// The event by its id: its name was never read, so the first read asks the gateway, the second does not.
const eventId = pages.result.event.id;
const eventFirst = await counted(async () => (await client.query({ query: NODE, variables: { id: eventId } })).data);
const eventAgain = await counted(async () => (await client.query({ query: NODE, variables: { id: eventId } })).data);

// The same query by GET (useGETForQueries), as a CDN-cached application might send it.
const getLog: SentRequest[] = [];
const getClient = new ApolloClient({
  link: new HttpLink({
    uri: GATEWAY_URL,
    headers: authorization,
    fetch: recordingFetch(getLog),
    useGETForQueries: true,
  }),
  cache: new InMemoryCache({ possibleTypes }),
});
const byGet = await getClient.query({ query: NODE, variables: { id: eventId } });

// The types the cache holds as entities of their own (`<__typename>:<id>`), beside the root query.
const normalized = [...new Set(Object.keys(cache.extract()).map((key) => key.split(':')[0]))]
  .filter((type) => type !== 'ROOT_QUERY')
  .sort();

report({
  normalized,
  pages: {
    requests: pages.requests,
    list: edges.map((edge) => edge.node.reservationNumber),
    pageInfo: pages.result.event.reservations.pageInfo,
    shown,
  },
  reservationNode,
  eventNode: { first: eventFirst, again: eventAgain },
  byGet: {
    data: byGet.data,
    request: getLog[0] && { method: getLog[0].method, headers: getLog[0].headers, status: getLog[0].status },
  },
  post: sent[0] && { method: sent[0].method, headers: sent[0].headers, status: sent[0].status },
});

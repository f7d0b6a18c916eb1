/**
 * Automatic persisted queries with Apollo Client 4's PersistedQueryLink: each request first sends
 * only the document's SHA-256; on PERSISTED_QUERY_NOT_FOUND the link sends the document with it,
 * and the gateway keeps it for the next request's hash. Then by GET (useGETForHashedQueries), the
 * form a CDN can cache.
 *
 *   node --import tsx src/apollo-apq.ts http://127.0.0.1:4000/graphql
 */
import { createHash } from 'node:crypto';
import { ApolloClient, gql, HttpLink, InMemoryCache } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { authorization, GATEWAY_URL, recordingFetch, report, type SentRequest } from './gateway.ts';

const EVENT_ID = Number(process.env.EVENT_ID ?? 5001);

const EVENT = gql`
  query EventName($eventId: Int!) {
    event(eventId: $eventId) { id name city }
  }
`;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

function client(log: SentRequest[], useGETForHashedQueries: boolean): ApolloClient {
  const http = new HttpLink({ uri: GATEWAY_URL, headers: authorization, fetch: recordingFetch(log) });
  return new ApolloClient({
    link: new PersistedQueryLink({ sha256, useGETForHashedQueries }).concat(http),
    cache: new InMemoryCache(),
  });
}

/** One query sent to the gateway (never answered from the cache): its data, or the error's message. */
async function ask(apollo: ApolloClient) {
  try {
    return {
      data: (await apollo.query({ query: EVENT, variables: { eventId: EVENT_ID }, fetchPolicy: 'network-only' })).data,
    };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const posted: SentRequest[] = [];
const byPost = client(posted, false);
const first = await ask(byPost);
const firstRequests = posted.length;
const second = await ask(byPost);

const gotten: SentRequest[] = [];
const byGet = await ask(client(gotten, true));

const shown = (log: SentRequest[]) =>
  log.map(({ method, url, headers, body, status, response }) => ({ method, url, headers, body, status, response }));
report({ first, second, byGet, firstRequests, posted: shown(posted), gotten: shown(gotten) });

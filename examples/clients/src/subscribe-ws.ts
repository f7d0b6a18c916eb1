/**
 * A graphql-ws subscriber (the protocol of Apollo's GraphQLWsLink and urql's subscriptionExchange):
 * prints each result of `reservationChanged` as a line of JSON until stopped. The credential goes in
 * the connection's init payload.
 *
 *   node --import tsx src/subscribe-ws.ts http://127.0.0.1:4000/graphql
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { authorization, GATEWAY_URL, report } from './gateway.ts';
import { EVENT_ID, RESERVATION_CHANGED } from './subscription.ts';

const client = createClient({
  url: GATEWAY_URL.replace(/^http/, 'ws'),
  // Node 20 has no WebSocket of its own; a browser passes none.
  webSocketImpl: WebSocket,
  connectionParams: authorization.authorization ? { Authorization: authorization.authorization } : undefined,
  retryAttempts: 0,
});

process.once('SIGTERM', async () => {
  await client.dispose();
  process.exit(0);
});
for await (const result of client.iterate({ query: RESERVATION_CHANGED, variables: { eventId: EVENT_ID } })) {
  report({ receivedAt: Date.now(), result });
}

/**
 * A graphql-sse subscriber (GraphQL over SSE, distinct connections mode: one POST with
 * `Accept: text/event-stream` per subscription, as Yoga serves it): prints each result of
 * `reservationChanged` as a line of JSON until stopped.
 *
 *   node --import tsx src/subscribe-sse.ts http://127.0.0.1:4000/graphql
 */
import { createClient } from 'graphql-sse';
import { authorization, GATEWAY_URL, report } from './gateway.ts';
import { EVENT_ID, RESERVATION_CHANGED } from './subscription.ts';

const client = createClient({ url: GATEWAY_URL, headers: authorization, retryAttempts: 0 });

process.once('SIGTERM', async () => {
  await client.dispose();
  process.exit(0);
});
for await (const result of client.iterate({ query: RESERVATION_CHANGED, variables: { eventId: EVENT_ID } })) {
  report({ receivedAt: Date.now(), result });
}

/**
 * A webhook receiver for the gateway's deliveries (docs/webhooks.md), with Node and `standardwebhooks`:
 *
 *   WEBHOOK_SECRET=whsec_… node --import tsx examples/webhooks/receiver.ts
 *
 * It verifies each delivery with the Standard Webhooks specification's own package
 * (`standardwebhooks`: `new Webhook(secret).verify(rawBody, headers)`, on the raw body, before
 * parsing it, with a 5-minute tolerance on the timestamp), answers 204 at once, ignores a
 * `webhook-id` it already handled (a delivery can come twice), and ignores a reservation's state
 * older than one it holds (`data.sequence`). Register it with
 * `createWebhookEndpoint(input: { url: "http://localhost:4100/hooks", eventIds: [5003] })` and
 * `WEBHOOK_ALLOW_HTTP_HOSTS=localhost` on the gateway (plain HTTP to localhost: development only).
 */
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const secret = process.env.WEBHOOK_SECRET ?? '';
if (!secret.startsWith('whsec_'))
  throw new Error('Set WEBHOOK_SECRET to the whsec_… secret createWebhookEndpoint answered.');
const webhook = new Webhook(secret);

/** Whether the delivery is signed with the secret (any one of its signatures, while a secret rotates). */
function verified(headers: Record<string, string | string[] | undefined>, body: string): boolean {
  try {
    webhook.verify(body, headers as Record<string, string>, { jsonParse: false });
    return true;
  } catch {
    return false;
  }
}

/** Handled webhook-ids (a real receiver keeps them in its database, for a few days). */
const handled = new Set<string>();
/** The latest sequence seen per reservation. */
const latest = new Map<string, number>();

createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    if (!verified(request.headers, body)) return void response.writeHead(401).end();
    response.writeHead(204).end();
    const id = String(request.headers['webhook-id']);
    if (handled.has(id)) return;
    handled.add(id);
    const message = JSON.parse(body) as {
      type: string;
      data: { eventId?: number; reservationNumber?: number; id?: string; status?: string; sequence?: number };
    };
    const { data } = message;
    if (data.reservationNumber !== undefined && data.sequence !== undefined) {
      const reservation = `${data.eventId}:${data.reservationNumber}`;
      if ((latest.get(reservation) ?? 0) >= data.sequence) return;
      latest.set(reservation, data.sequence);
    }
    // Read what you need through the graph with your own credential: node(id: data.id) { … on Reservation { … } }.
    console.log(
      message.type,
      data.reservationNumber ?? '',
      data.status ?? '',
      `#${data.sequence ?? ''}`,
      data.id ?? '',
    );
  });
}).listen(Number(process.env.PORT ?? 4100), () =>
  console.log(`receiving webhooks on :${process.env.PORT ?? 4100}/hooks`),
);

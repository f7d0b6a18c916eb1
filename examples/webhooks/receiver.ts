/**
 * A webhook receiver for the gateway's deliveries (docs/webhooks.md), with Node alone:
 *
 *   WEBHOOK_SECRET=whsec_… node --import tsx examples/webhooks/receiver.ts
 *
 * It verifies each delivery as the Standard Webhooks specification says (on the raw body, before
 * parsing it; the `standardwebhooks` package's `new Webhook(secret).verify(body, headers)` does the
 * same), answers 204 at once, ignores a `webhook-id` it already handled (a delivery can come twice),
 * and ignores a reservation's state older than one it holds (`data.sequence`). Register it with
 * `createWebhookEndpoint(input: { url: "http://localhost:4100/hooks", eventIds: [5003] })` and
 * `WEBHOOK_ALLOW_HTTP_HOSTS=localhost` on the gateway (plain HTTP to localhost: development only).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const secret = process.env.WEBHOOK_SECRET ?? '';
if (!secret.startsWith('whsec_'))
  throw new Error('Set WEBHOOK_SECRET to the whsec_… secret createWebhookEndpoint answered.');
const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
/** How far a delivery's timestamp may be from now (replayed requests are refused past it). */
const TOLERANCE_SECONDS = 5 * 60;

function verified(headers: Record<string, string | string[] | undefined>, body: string): boolean {
  const [id, timestamp, signatures] = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) =>
    String(headers[name] ?? ''),
  );
  if (!id || !timestamp || !signatures) return false;
  if (Math.abs(Date.now() / 1_000 - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const expected = Buffer.from(`v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`);
  // Several signatures while a secret rotates: any one that matches will do.
  return signatures.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
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

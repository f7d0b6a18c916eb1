import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Signing as the Standard Webhooks specification writes it
 * (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md):
 * a secret is `whsec_` and the base64 of its key; a signature is `v1,` and the base64 of
 * HMAC-SHA256, under the key, of `id.timestamp.body` (timestamp in whole seconds, body as sent);
 * `webhook-signature` carries one or more, space-separated (several while a secret rotates).
 *
 * Written here with node:crypto because the specification's own package (`standardwebhooks`) is
 * not installed: this module is the one place to swap for it (`new Webhook(secret).sign(id, date,
 * body)` gives the same `v1,…`). The reference vector of the specification's libraries is in
 * test/webhooks/signature.test.ts.
 */

const PREFIX = 'whsec_';
/** The specification: keys between 24 and 64 bytes. */
const KEY_BYTES = 32;

/** A new signing secret, `whsec_` and the base64 of 32 random bytes. */
export function newSecret(): string {
  return PREFIX + randomBytes(KEY_BYTES).toString('base64');
}

function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** The `v1,` signature of `body` sent as message `id` at `timestamp` (seconds since the epoch). */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const digest = createHmac('sha256', keyOf(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${digest}`;
}

/** The three headers of a delivery, signed with every secret in `secrets` (the current one first). */
export function signedHeaders(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string } {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => sign(secret, id, timestamp, body)).join(' '),
  };
}

/**
 * Whether `headers` sign `body` with `secret`, within `toleranceSeconds` of `nowSeconds` (the
 * receiver's side; the specification's libraries use 5 minutes). For tests and the example receiver.
 */
export function verify(
  secret: string,
  headers: Record<string, string | undefined>,
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const id = headers['webhook-id'];
  const timestamp = Number(headers['webhook-timestamp']);
  const signatures = headers['webhook-signature'];
  if (!id || !Number.isInteger(timestamp) || !signatures) return false;
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(sign(secret, id, timestamp, body));
  return signatures.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

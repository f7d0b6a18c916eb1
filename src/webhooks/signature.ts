import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Signing as the Standard Webhooks specification writes it
 * (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md),
 * with the specification's own package (`standardwebhooks`): a secret is `whsec_` and the base64
 * of its key; a signature is `v1,` and the base64 of HMAC-SHA256, under the key, of
 * `id.timestamp.body` (timestamp in whole seconds, body as sent); `webhook-signature` carries one
 * or more, space-separated (several while a secret rotates). A receiver verifies with the same
 * package: `new Webhook(secret).verify(rawBody, headers)`.
 */

const PREFIX = 'whsec_';
/** The specification: keys between 24 and 64 bytes. */
const KEY_BYTES = 32;

/** A new signing secret, `whsec_` and the base64 of 32 random bytes. */
export function newSecret(): string {
  return PREFIX + randomBytes(KEY_BYTES).toString('base64');
}

/** The `v1,` signature of `body` sent as message `id` at `timestamp` (seconds since the epoch). */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  return new Webhook(secret).sign(id, new Date(timestamp * 1_000), body);
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

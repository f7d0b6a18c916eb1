import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Endpoint secrets sealed at rest in Redis (WEBHOOK_SECRET_KEY): AES-256-GCM with node:crypto, a
 * fresh 96-bit nonce per seal, and the endpoint's id as associated data, so a sealed secret copied
 * onto another endpoint's record does not open. A sealed value is `aes256gcm:` and the base64url
 * of nonce, tag and ciphertext. The first key seals; every key opens, so the key can be changed
 * (new key first, the old one after it, until every endpoint was saved again).
 */

const SEALED = 'aes256gcm:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export const isSealed = (stored: string) => stored.startsWith(SEALED);

export class SecretBox {
  private readonly keys: readonly Buffer[];

  /** `keys`: 64 hex digits each (256 bits); the first seals. */
  constructor(keys: readonly string[]) {
    if (keys.length === 0) throw new Error('a SecretBox needs at least one key');
    this.keys = keys.map((key) => {
      const bytes = Buffer.from(key, 'hex');
      if (bytes.length !== 32) throw new Error('a webhook secret key must be 64 hex digits (256 bits)');
      return bytes;
    });
  }

  /** `value` sealed for the record `context` (its endpoint id). */
  seal(value: string, context: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys[0]!, nonce).setAAD(Buffer.from(context, 'utf8'));
    const sealed = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return SEALED + Buffer.concat([nonce, cipher.getAuthTag(), sealed]).toString('base64url');
  }

  /** The value sealed for `context`; a value stored in clear (before a key was set) as it is. Throws when no key opens it. */
  open(stored: string, context: string): string {
    if (!isSealed(stored)) return stored;
    const raw = Buffer.from(stored.slice(SEALED.length), 'base64url');
    const nonce = raw.subarray(0, NONCE_BYTES);
    const tag = raw.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES);
    const sealed = raw.subarray(NONCE_BYTES + TAG_BYTES);
    for (const key of this.keys) {
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, nonce).setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(sealed), decipher.final()]).toString('utf8');
      } catch {
        // Another key, or not this record's: the next key is tried.
      }
    }
    throw new Error(
      `the signing secret of webhook endpoint ${context} is sealed with a key WEBHOOK_SECRET_KEY does not hold`,
    );
  }
}

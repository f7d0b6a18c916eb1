import { randomUUID } from 'node:crypto';
import type { RedisConnection } from './connection.ts';

/**
 * The answers of operations sent with an Idempotency-Key, shared by every replica
 * (operations/idempotency.ts says what is kept and why). Under REDIS_PREFIX, one string per
 * licensee and key, `idempotency:<licensee>:<hash of the key>`, holding JSON:
 *
 * - `{"running":<token>,"fingerprint":…}` while the first operation runs: taken with SET NX and
 *   lapsing after `runningMs`, so that a replica that died mid-run holds the key no longer;
 * - `{"fingerprint":…,"answer":…}` once it was answered, for `keptMs` (24 h). With a `box`
 *   (WEBHOOK_SECRET_KEY) the answer is sealed (AES-256-GCM, the record's own key as associated
 *   data, so an answer copied under another key does not open); without one it is kept in clear,
 *   as the endpoints' own signing secrets are then (webhooks/endpoint-store.ts).
 *
 * Only the replica whose mark is there may turn it into an answer or take it away (one script each).
 * While Redis is away, `fallback` (this replica's memory) answers: a repeat reaching this replica
 * is still answered, one reaching another runs again.
 */

/** What seals a kept answer: webhooks' SecretBox fits. `open` throws when no key opens it. */
export interface Sealer {
  seal(value: string, context: string): string;
  open(stored: string, context: string): string;
}

export interface KeptAnswer {
  fingerprint: string;
  /** The answer as its client received it, as JSON. */
  answer: string;
}

/** The running operation's hold on a key: `keep` its answer, or `release` the key (nothing kept). */
export interface Held {
  keep(answer: KeptAnswer): Promise<void>;
  release(): Promise<void>;
}

/** What claiming a key found: the key is ours now, or an answer is kept, or another operation runs with it. */
export type Claim = { held: Held } | { kept: KeptAnswer } | { running: { fingerprint: string } };

interface Store {
  claim(key: string, fingerprint: string): Promise<Claim>;
}

/** ARGV: the running mark. Sets the answer (ARGV[2], PX ARGV[3]) only over this operation's own mark. */
const KEEP = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

/** Deletes the key only while it holds this operation's own mark. */
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])`;

const SEALED = 'aes256gcm:';

export class RedisIdempotencyStore implements Store {
  constructor(
    private readonly redis: RedisConnection,
    private readonly fallback: Store,
    private readonly times: { runningMs: number; keptMs: number },
    private readonly box?: Sealer,
  ) {}

  private key(key: string): string {
    return `${this.redis.prefix}idempotency:${key}`;
  }

  async claim(key: string, fingerprint: string): Promise<Claim> {
    const stored = this.key(key);
    const mark = JSON.stringify({ running: randomUUID(), fingerprint });
    try {
      // Twice at most: a mark that lapsed (or was released) between the SET and the GET is taken again.
      for (let attempt = 0; attempt < 2; attempt++) {
        const taken = await this.redis.commands.set(stored, mark, 'PX', this.times.runningMs, 'NX');
        if (taken === 'OK') return { held: this.held(key, stored, mark) };
        const found = await this.redis.commands.get(stored);
        if (found !== null) return this.found(stored, found);
      }
    } catch {
      return this.fallback.claim(key, fingerprint);
    }
    return { running: { fingerprint } };
  }

  private found(stored: string, found: string): Claim {
    const record = JSON.parse(found) as { running?: string; fingerprint: string; answer?: string };
    if (record.answer === undefined) return { running: { fingerprint: record.fingerprint } };
    return { kept: { fingerprint: record.fingerprint, answer: this.opened(record.answer, stored) } };
  }

  private opened(answer: string, stored: string): string {
    if (this.box) return this.box.open(answer, stored);
    if (answer.startsWith(SEALED))
      throw new Error('a kept idempotent answer is sealed, and WEBHOOK_SECRET_KEY is not set to open it');
    return answer;
  }

  private held(key: string, stored: string, mark: string): Held {
    const { redis, times, box } = this;
    return {
      keep: async ({ fingerprint, answer }) => {
        const record = JSON.stringify({ fingerprint, answer: box ? box.seal(answer, stored) : answer });
        try {
          await redis.commands.eval(KEEP, 1, stored, mark, record, times.keptMs);
        } catch {
          // Redis went away while it ran: this replica keeps it, as it would have answered it.
          const claim = await this.fallback.claim(key, fingerprint);
          if ('held' in claim) await claim.held.keep({ fingerprint, answer });
        }
      },
      release: async () => {
        await redis.commands.eval(RELEASE, 1, stored, mark).catch(() => {
          // Lost with Redis: the mark lapses on its own after runningMs.
        });
      },
    };
  }
}

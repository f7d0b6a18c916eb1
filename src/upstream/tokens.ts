import type { UpstreamAccount } from './account.ts';
import { withDeadline } from './deadline.ts';
import { UpstreamUnavailableError } from './errors.ts';

/**
 * One token per licensee (octokit's auth-app pattern): fetched on first need with one in-flight
 * authenticate however many calls wait, renewed behind the held token before its 30 minutes run
 * out, dropped when the service rejects it. The service may revoke a token early, so our clock is never trusted alone.
 */

export interface HeldToken {
  token: string;
  obtainedAt: number;
}

/** Where tokens live: memory here, Redis when replicas share one token. */
export interface TokenStore {
  get(licensee: string): Promise<HeldToken | undefined>;
  set(licensee: string, held: HeldToken): Promise<void>;
  /** Drops the token only if it is still the one held. */
  drop(licensee: string, token: string): Promise<void>;
  /**
   * Optional, for a store shared by replicas: obtains and stores a token under a lock they all
   * respect, or returns one `usable` accepts that another replica stored meanwhile.
   */
  renew?(licensee: string, usable: (held: HeldToken) => boolean, obtain: () => Promise<HeldToken>): Promise<HeldToken>;
}

export class MemoryTokenStore implements TokenStore {
  private readonly tokens = new Map<string, HeldToken>();
  async get(licensee: string) {
    return this.tokens.get(licensee);
  }
  async set(licensee: string, held: HeldToken) {
    this.tokens.set(licensee, held);
  }
  async drop(licensee: string, token: string) {
    if (this.tokens.get(licensee)?.token === token) this.tokens.delete(licensee);
  }
  /** Every licensee's token held (a shared store writes them back into a Redis that restarted empty). */
  entries(): [string, HeldToken][] {
    return [...this.tokens.entries()];
  }
}

export const TOKEN_LIFETIME_MS = 30 * 60_000;
/** A held token is served until this long before its lifetime ends, so it cannot expire in flight. */
const EXPIRY_MARGIN_MS = 30_000;
/** After a background renewal failed, the next one waits this long (the held token still serves). */
const RENEWAL_RETRY_MS = 30_000;
/**
 * When only an answer's message calls the token invalid or expired, it may be echoing a client's
 * value: such an answer renews the token only once it is this old, and a licensee's token at most
 * once per this long. A client that puts "token is expired" in every request then costs at most one
 * authenticate per 30 s, and a service that reports an expired token in words alone (in a 200 body,
 * say) is still served once the token it refuses has been held 30 s (README, "When the service struggles").
 */
export const WORDS_RENEWAL_MS = 30_000;

/**
 * How an authenticate is attempted: `retrying` (the token a call needs: a short retry policy of its
 * own) or `once` (readiness' probe: one request, so a health check during an outage costs one).
 */
export type AuthenticateAttempts = 'retrying' | 'once';

export interface TokenManagerOptions {
  /** Renew this long before the lifetime runs out. */
  renewBeforeMs?: number;
  store?: TokenStore;
  now?: () => number;
  logger?: { warn(obj: object, msg: string): void };
}

export class TokenManager {
  private readonly inFlight = new Map<string, Promise<HeldToken>>();
  private readonly renewalFailedAt = new Map<string, number>();
  /** When each licensee's token was last renewed because words alone refused it. */
  private readonly renewedForWordsAt = new Map<string, number>();
  private readonly store: TokenStore;
  private readonly now: () => number;
  private readonly renewBeforeMs: number;

  constructor(
    /** Obtains a new token, through its own policy, never the data calls' breaker. */
    private readonly authenticate: (licensee: UpstreamAccount, attempts: AuthenticateAttempts) => Promise<string>,
    private readonly options: TokenManagerOptions = {},
  ) {
    this.store = options.store ?? new MemoryTokenStore();
    this.now = options.now ?? (() => Date.now());
    this.renewBeforeMs = options.renewBeforeMs ?? 5 * 60_000;
  }

  /**
   * A token believed valid. Near the end of its life the held token is still served while one
   * renewal runs behind it; only a caller with no valid token waits for an authenticate, and no
   * longer than its deadline. Callers arriving while an authenticate is in flight share it,
   * whichever way it is attempted (one authenticate per licensee at a time).
   */
  async get(
    licensee: UpstreamAccount,
    deadline = Infinity,
    attempts: AuthenticateAttempts = 'retrying',
  ): Promise<string> {
    return (await this.lease(licensee, deadline, attempts)).token;
  }

  /** As `get`, with the time the token was obtained (the token layer weighs a rejection by its age). */
  async lease(
    licensee: UpstreamAccount,
    deadline = Infinity,
    attempts: AuthenticateAttempts = 'retrying',
  ): Promise<HeldToken> {
    const held = await this.store.get(licensee.systemIdentifier);
    const age = held ? this.now() - held.obtainedAt : Infinity;
    if (held && age < TOKEN_LIFETIME_MS - this.renewBeforeMs) return held;
    if (held && age < TOKEN_LIFETIME_MS - EXPIRY_MARGIN_MS) {
      this.renewBehind(licensee);
      return held;
    }
    return withDeadline(
      this.obtainOnce(licensee, attempts),
      deadline,
      () => new UpstreamUnavailableError('no token could be obtained from the reservation service in time'),
      this.now,
    );
  }

  /** Whether a token is held that our clock still believes valid. */
  async holds(licensee: UpstreamAccount): Promise<boolean> {
    const held = await this.store.get(licensee.systemIdentifier);
    return held !== undefined && this.now() - held.obtainedAt < TOKEN_LIFETIME_MS - EXPIRY_MARGIN_MS;
  }

  /** The service rejected this token: forget it so the next get authenticates. */
  async reject(licensee: UpstreamAccount, token: string): Promise<void> {
    await this.store.drop(licensee.systemIdentifier, token);
  }

  /**
   * Only the words of an answer refused `used` (they may be a client's value echoed back): the
   * token to repeat the call with, or undefined when the answer is to be taken as the service's
   * refusal. A token another call has replaced or dropped meanwhile gives way to what any call
   * gets now; otherwise `used` is renewed (one authenticate, shared with any in flight) only when
   * it is at least WORDS_RENEWAL_MS old and the licensee's token was not renewed for words within
   * WORDS_RENEWAL_MS.
   */
  async renewRefusedByWords(
    licensee: UpstreamAccount,
    used: HeldToken,
    deadline = Infinity,
  ): Promise<HeldToken | undefined> {
    const id = licensee.systemIdentifier;
    if ((await this.store.get(id))?.token !== used.token) return this.lease(licensee, deadline);
    const now = this.now();
    const renewedAt = this.renewedForWordsAt.get(id);
    if (now - used.obtainedAt < WORDS_RENEWAL_MS || (renewedAt !== undefined && now - renewedAt < WORDS_RENEWAL_MS))
      return undefined;
    this.renewedForWordsAt.set(id, now);
    await this.store.drop(id, used.token);
    return this.lease(licensee, deadline);
  }

  private renewBehind(licensee: UpstreamAccount): void {
    if (this.inFlight.has(licensee.systemIdentifier)) return;
    const failedAt = this.renewalFailedAt.get(licensee.systemIdentifier);
    if (failedAt !== undefined && this.now() - failedAt < RENEWAL_RETRY_MS) return;
    this.obtainOnce(licensee, 'retrying').then(
      () => this.renewalFailedAt.delete(licensee.systemIdentifier),
      (error: unknown) => {
        this.renewalFailedAt.set(licensee.systemIdentifier, this.now());
        this.options.logger?.warn(
          { licensee: licensee.systemIdentifier, error: (error as Error).message },
          'token renewal failed; serving the held token',
        );
      },
    );
  }

  /** One authenticate per licensee at a time, however many callers wait for it. */
  private obtainOnce(licensee: UpstreamAccount, attempts: AuthenticateAttempts): Promise<HeldToken> {
    let pending = this.inFlight.get(licensee.systemIdentifier);
    if (!pending) {
      pending = this.obtain(licensee, attempts).finally(() => this.inFlight.delete(licensee.systemIdentifier));
      this.inFlight.set(licensee.systemIdentifier, pending);
    }
    return pending;
  }

  private async obtain(licensee: UpstreamAccount, attempts: AuthenticateAttempts): Promise<HeldToken> {
    const fresh = async (): Promise<HeldToken> => {
      const obtainedAt = this.now();
      return { token: await this.authenticate(licensee, attempts), obtainedAt };
    };
    // Replicas sharing a store: one of them authenticates, the others take what it stored.
    if (this.store.renew)
      return this.store.renew(
        licensee.systemIdentifier,
        (held) => this.now() - held.obtainedAt < TOKEN_LIFETIME_MS - this.renewBeforeMs,
        fresh,
      );
    const held = await fresh();
    await this.store.set(licensee.systemIdentifier, held);
    return held;
  }
}

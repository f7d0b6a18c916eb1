import type { UpstreamAccount } from './account.ts';
import { withDeadline } from './deadline.ts';
import { UpstreamUnavailableError } from './errors.ts';
import { TokenEchoes } from './token-echoes.ts';

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
  /** Told of each request proven to echo a token refusal in words (token-echoes.ts). */
  onEcho?: (event: { licensee: string; endpoint: string }) => void;
}

export class TokenManager {
  private readonly inFlight = new Map<string, Promise<HeldToken>>();
  private readonly renewalFailedAt = new Map<string, number>();
  /** Requests proven to echo words, and licensees whose words stopped renewing for a while. */
  readonly echoes: TokenEchoes;
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
    this.echoes = new TokenEchoes({ now: this.now, onEcho: options.onEcho });
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

  /** As `get`, with the time the token was obtained. */
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
   * The service refused `refused`: the token to repeat the call with, obtained after the refusal.
   * Every call that saw the same token refused shares one authenticate, whatever the token's age
   * (our clock is never trusted about a token): the first drops it (a compare-and-delete, so across
   * replicas too) and authenticates; the others find it gone or replaced and take what any call
   * gets now, joining the authenticate in flight.
   */
  async renewRefused(licensee: UpstreamAccount, refused: string, deadline = Infinity): Promise<HeldToken> {
    await this.store.drop(licensee.systemIdentifier, refused);
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

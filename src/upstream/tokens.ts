import type { Licensee } from './licensee.ts';

/**
 * One token per licensee (octokit's auth-app pattern): fetched on first need with one in-flight
 * authenticate however many calls wait, renewed before its 30 minutes run out, dropped when the
 * service rejects it. The service may revoke a token early, so our clock is never trusted alone.
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
}

export const TOKEN_LIFETIME_MS = 30 * 60_000;

export interface TokenManagerOptions {
  /** Renew this long before the lifetime runs out. */
  renewBeforeMs?: number;
  store?: TokenStore;
  now?: () => number;
}

export class TokenManager {
  private readonly inFlight = new Map<string, Promise<string>>();
  private readonly store: TokenStore;
  private readonly now: () => number;
  private readonly renewBeforeMs: number;

  constructor(
    private readonly authenticate: (licensee: Licensee) => Promise<string>,
    options: TokenManagerOptions = {},
  ) {
    this.store = options.store ?? new MemoryTokenStore();
    this.now = options.now ?? (() => Date.now());
    this.renewBeforeMs = options.renewBeforeMs ?? 5 * 60_000;
  }

  /** A token believed valid, authenticating once for all waiting callers when there is none. */
  async get(licensee: Licensee): Promise<string> {
    const held = await this.store.get(licensee.id);
    if (held && this.now() - held.obtainedAt < TOKEN_LIFETIME_MS - this.renewBeforeMs) return held.token;
    let pending = this.inFlight.get(licensee.id);
    if (!pending) {
      pending = this.obtain(licensee).finally(() => this.inFlight.delete(licensee.id));
      this.inFlight.set(licensee.id, pending);
    }
    return pending;
  }

  /** Whether a token is held that our clock still believes valid. */
  async holds(licensee: Licensee): Promise<boolean> {
    const held = await this.store.get(licensee.id);
    return held !== undefined && this.now() - held.obtainedAt < TOKEN_LIFETIME_MS;
  }

  /** The service rejected this token: forget it so the next get authenticates. */
  async reject(licensee: Licensee, token: string): Promise<void> {
    await this.store.drop(licensee.id, token);
  }

  private async obtain(licensee: Licensee): Promise<string> {
    const obtainedAt = this.now();
    const token = await this.authenticate(licensee);
    await this.store.set(licensee.id, { token, obtainedAt });
    return token;
  }
}

import type { AuthSettings } from '../config/environment.ts';
import type { Licensee } from '../config/licensees.ts';
import { type ApiKeyClients, apiKeyAuthenticator } from './api-key.ts';
import type { KeySetTiming } from './jwt.ts';
import { anonymousPrincipal, type Principal } from './principal.ts';
import type { Authenticator } from './verdict.ts';

/**
 * The credentials GATEWAY_AUTH accepts, for the licensees of LICENSEES_FILE as it reads now: a
 * reload (config/reload.ts) replaces them at once for every door, and ends what a credential the
 * new file no longer holds had opened (`watch`). `none` lets every request act for the only licensee.
 */
export class Credentials {
  #authenticate: Authenticator;
  #holds: (principal: Principal) => boolean;
  #apiKeys?: ApiKeyClients;
  #licenseeIds = new Set<string>();
  /** What each principal opened (a stream), ended when its credential is no longer held. */
  #watchers = new Set<{ principal: Principal; end: () => void }>();

  constructor(
    private readonly auth: AuthSettings,
    licensees: readonly Licensee[],
    keySetTiming?: KeySetTiming,
  ) {
    this.#authenticate = () => ({ refused: 'not ready' });
    this.#holds = () => false;
    this.replace(licensees);
    if (auth.mode === 'jwt') {
      const licenseesNow = { has: (id: string) => this.#licenseeIds.has(id) };
      // jose is loaded with the first token checked: a gateway of API keys never carries it.
      let jwt: Promise<Authenticator> | undefined;
      this.#authenticate = async (request) =>
        (await (jwt ??= import('./jwt.ts').then((m) => m.jwtAuthenticator(auth, licenseesNow, keySetTiming))))(request);
    }
  }

  /** Checks one request's credential against the licensees as they are now. */
  readonly authenticate: Authenticator = (request) => this.#authenticate(request);

  /** Takes the licensees of a new file; what a credential it no longer holds opened ends now. */
  replace(licensees: readonly Licensee[]): void {
    this.#licenseeIds = new Set(licensees.map((licensee) => licensee.id));
    const ids = this.#licenseeIds;
    switch (this.auth.mode) {
      case 'none': {
        // config.ts refuses none with more than one licensee.
        const principal = anonymousPrincipal(licensees[0]!.id);
        const verdict = { principal };
        this.#authenticate = () => verdict;
        this.#holds = (held) => ids.has(held.licenseeId);
        break;
      }
      case 'api-key': {
        const apiKeys = apiKeyAuthenticator(licensees, this.#apiKeys);
        this.#apiKeys = apiKeys;
        this.#authenticate = apiKeys.authenticate;
        this.#holds = (held) => apiKeys.principals.has(held);
        break;
      }
      case 'jwt':
        // The token's licensee is read against `ids` for each token (this.#licenseeIds).
        this.#holds = (held) => ids.has(held.licenseeId);
        break;
    }
    for (const watcher of this.#watchers) if (!this.#holds(watcher.principal)) watcher.end();
  }

  /** Whether the credential this principal was let in with is still accepted. */
  holds(principal: Principal): boolean {
    return this.#holds(principal);
  }

  /** Calls `end` once the principal's credential is no longer held (a reload removed it); the returned function stops watching. */
  watch(principal: Principal, end: () => void): () => void {
    const watcher = { principal, end };
    this.#watchers.add(watcher);
    return () => this.#watchers.delete(watcher);
  }
}

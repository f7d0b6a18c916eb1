import type { AuthSettings } from '../config/environment.ts';
import type { Licensee } from '../config/licensees.ts';
import { apiKeyAuthenticator } from './api-key.ts';
import type { KeySetTiming } from './jwt.ts';
import { anonymousPrincipal } from './principal.ts';
import type { Authenticator } from './verdict.ts';

/** The authenticator of GATEWAY_AUTH; `none` lets every request act for the only licensee. */
export function authenticatorFor(
  auth: AuthSettings,
  licensees: readonly Licensee[],
  keySetTiming?: KeySetTiming,
): Authenticator {
  switch (auth.mode) {
    case 'none': {
      // config.ts refuses none with more than one licensee.
      const principal = anonymousPrincipal(licensees[0]!.id);
      const verdict = { principal };
      return () => verdict;
    }
    case 'api-key':
      return apiKeyAuthenticator(licensees);
    case 'jwt': {
      // jose is loaded with the first token checked: a gateway of API keys never carries it.
      let jwt: Promise<Authenticator> | undefined;
      return async (request) =>
        (await (jwt ??= import('./jwt.ts').then((m) => m.jwtAuthenticator(auth, licensees, keySetTiming))))(request);
    }
  }
}

import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { ErrorCode } from '../error-codes.ts';
import type { Principal } from './principal.ts';
import type { Authenticator, Verdict } from './verdict.ts';

/** The principal of each request the authentication plugin let in, for the context to read. */
export class RequestPrincipals {
  private readonly byRequest = new WeakMap<Request, Principal>();

  set(request: Request, principal: Principal): void {
    this.byRequest.set(request, principal);
  }

  of(request: Request): Principal {
    const principal = this.byRequest.get(request);
    // Only a request that passed useAuthentication reaches the context: anything else is a wiring fault.
    if (!principal) throw new Error('no principal for this request: useAuthentication did not run');
    return principal;
  }
}

/**
 * Lets in only requests whose credential the authenticator accepts, before their body is even
 * parsed: the rest get 401 with `WWW-Authenticate: Bearer` and one UNAUTHENTICATED error saying
 * what to send, and nothing runs. `/health`, `/ready` and GraphiQL's page are answered earlier
 * (in onRequest), so they need no credential.
 */
export function useAuthentication(authenticate: Authenticator, principals: RequestPrincipals): Plugin {
  return {
    onRequestParse({ request }) {
      const verdict = authenticate(request);
      return verdict instanceof Promise ? verdict.then((known) => admit(request, known)) : admit(request, verdict);
    },
  };

  function admit(request: Request, verdict: Verdict): void {
    if ('principal' in verdict) return principals.set(request, verdict.principal);
    if ('unavailable' in verdict) {
      throw createGraphQLError(verdict.unavailable, {
        extensions: { code: ErrorCode.UPSTREAM_UNAVAILABLE, http: { status: 503, headers: { 'retry-after': '5' } } },
      });
    }
    throw createGraphQLError(verdict.refused, {
      extensions: {
        code: ErrorCode.UNAUTHENTICATED,
        http: { status: 401, headers: { 'www-authenticate': 'Bearer' } },
      },
    });
  }
}

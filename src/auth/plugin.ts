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

  has(request: Request): boolean {
    return this.byRequest.has(request);
  }

  of(request: Request): Principal {
    const principal = this.byRequest.get(request);
    // Only a request that passed useAuthentication reaches the context: anything else is a wiring fault.
    if (!principal) throw new Error('no principal for this request: useAuthentication did not run');
    return principal;
  }
}

/**
 * Lets in only operations whose credential the authenticator accepts: the rest get one
 * UNAUTHENTICATED error saying what to send (401 with `WWW-Authenticate: Bearer` over HTTP), and
 * nothing runs. An HTTP request is checked before its body is even parsed; an operation that comes
 * without one (on a socket, its request carries the connection's credential) when its parameters
 * arrive, before any other hook reads them. So a credential removed or expired is refused on every
 * door at its next operation. `/health`, `/ready` and GraphiQL's page are answered earlier (in
 * onRequest), so they need no credential.
 */
export function useAuthentication(authenticate: Authenticator, principals: RequestPrincipals): Plugin {
  const check = (request: Request) => {
    const verdict = authenticate(request);
    return verdict instanceof Promise ? verdict.then((known) => admit(request, known)) : admit(request, verdict);
  };
  return {
    onRequestParse: ({ request }) => check(request),
    onParams({ request }) {
      if (!principals.has(request)) return check(request);
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

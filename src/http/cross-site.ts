import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { createGraphQLError, type Plugin, type YogaServerOptions } from 'graphql-yoga';
import { ErrorCode } from '../error-codes.ts';

type CorsSetting = YogaServerOptions<object, object>['cors'];

/**
 * Requests a page of another site could make through a user's browser. A browser sends a form or
 * multipart POST, or a GET, to any site without asking it first (no CORS preflight): such a
 * request must carry one of these headers, which no page can add without a preflight. Apollo
 * Client sends Apollo-Require-Preflight; GraphiQL and JSON clients send application/json, which
 * is preflighted anyway.
 */
const PREFLIGHT_HEADERS = ['GraphQL-Preflight', 'X-GraphQL-Yoga-CSRF', 'Apollo-Require-Preflight'];

/** Yoga's CSRF prevention, with an empty header not counting and a message saying what to send. */
export function useCsrfPrevention(): Plugin {
  const yogaCheck = useCSRFPrevention({ requestHeaders: PREFLIGHT_HEADERS });
  return {
    onRequestParse(payload) {
      const { request } = payload;
      // Yoga's check asks `has`; a header sent empty says nothing, as in Apollo's rule.
      const headers = {
        get: (name: string) => request.headers.get(name),
        has: (name: string) => Boolean(request.headers.get(name)?.trim()),
      };
      try {
        return yogaCheck.onRequestParse?.({ ...payload, request: { headers } as Request });
      } catch {
        throw createGraphQLError(
          `This request could come from a page of another site: a GET, or a POST that is not application/json, needs a non-empty header ${PREFLIGHT_HEADERS.join(', ')} (for example GraphQL-Preflight: 1).`,
          { extensions: { code: ErrorCode.BAD_REQUEST, http: { status: 403 } } },
        );
      }
    },
  };
}

/** Pages a developer serves on this machine (`npm run dev` of a frontend): any port of localhost or 127.0.0.1. */
const LOCAL_PAGE = /^http:\/\/(localhost|127\.0\.0\.1)(:\d{1,5})?$/;

/** Which pages of other origins may use the gateway through a browser: one policy, for CORS and for sockets. */
export interface PageOrigins {
  /** CORS_ORIGINS. */
  corsOrigins: readonly string[];
  /** A gateway on a loopback HOST with no CORS_ORIGINS: pages on localhost and 127.0.0.1 at any port. */
  localDevelopment: boolean;
}

/**
 * Whether a page of `origin` may use the gateway: an origin of CORS_ORIGINS or, with
 * `localDevelopment` (a gateway on a loopback HOST with no CORS_ORIGINS), a page on localhost or
 * 127.0.0.1 at any port: only this machine reaches it, and a frontend in development runs there.
 */
export function isAllowedPage(origin: string, pages: PageOrigins): boolean {
  return (
    pages.corsOrigins.includes(origin) ||
    (pages.localDevelopment && pages.corsOrigins.length === 0 && LOCAL_PAGE.test(origin))
  );
}

/**
 * CORS for the allowed pages only (isAllowedPage); other origins get no CORS headers, so their pages
 * cannot read an answer. (Yoga's default echoes any Origin with credentials allowed, and an empty
 * origin list means "any".) No cookies are used, so credentials are not allowed.
 */
export function corsFor(pages: PageOrigins): CorsSetting {
  if (pages.corsOrigins.length === 0 && !pages.localDevelopment) return false;
  return (request: Request) => {
    const origin = request.headers.get('origin');
    if (!origin || !isAllowedPage(origin, pages)) return false;
    // The audit trail's request id is readable by the page too, so a frontend can quote it in a report.
    return { origin: [origin], methods: ['GET', 'POST'], credentials: false, exposedHeaders: ['X-Request-Id'] };
  };
}

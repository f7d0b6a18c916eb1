import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Plugin } from 'graphql-yoga';

/** The operators' pages: every licensee's ids, budget use and errors, not for clients. */
const OPERATORS_PATHS = new Set(['/metrics', '/status', '/status.json']);

const REALM = 'realm="gateway operators"';

/**
 * `/metrics`, `/status` and `/status.json` for operators only. With OPS_TOKEN: a request must carry
 * it, as `Authorization: Bearer <OPS_TOKEN>` (Prometheus' `authorization: {credentials: …}`) or as
 * the password of `Authorization: Basic` (what a browser prompts for, and then sends with the
 * status page's own requests; any user name). Without OPS_TOKEN: only a client on this machine,
 * by the connection's address (a header could say anything), is served.
 */
export function useOperatorsOnly(opsToken: string | undefined): Plugin {
  // Compared as digests: equal lengths for timingSafeEqual, and no early exit on the first wrong character.
  const expected = opsToken === undefined ? undefined : digest(opsToken);
  return {
    onRequest({ request, url, serverContext, endResponse, fetchAPI }) {
      if (!OPERATORS_PATHS.has(url.pathname)) return;
      const refuse = (status: number, message: string, headers: Record<string, string> = {}) =>
        endResponse(
          new fetchAPI.Response(`${message}\n`, {
            status,
            headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers },
          }),
        );
      if (expected) {
        const offered = offeredToken(request.headers.get('authorization'));
        if (offered !== undefined && timingSafeEqual(digest(offered), expected)) return;
        return refuse(
          401,
          `${url.pathname} is for the gateway's operators: send the OPS_TOKEN setting's value as Authorization: Bearer <token>.`,
          {
            // Basic first: browsers answer the first challenge they know (and know no Bearer).
            'www-authenticate': `Basic ${REALM}, Bearer ${REALM}`,
          },
        );
      }
      if (isLoopbackAddress(remoteAddressOf(serverContext))) return;
      refuse(
        403,
        `${url.pathname} answers only clients on the gateway's own machine while OPS_TOKEN is unset: set OPS_TOKEN and send it as Authorization: Bearer <token>.`,
      );
    },
  };
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The token of `Bearer <token>`, or the password of `Basic base64(user:password)`. */
function offeredToken(authorization: string | null): string | undefined {
  const [scheme, credentials] = authorization?.trim().split(/\s+/, 2) ?? [];
  if (!credentials) return undefined;
  if (scheme?.toLowerCase() === 'bearer') return credentials;
  if (scheme?.toLowerCase() !== 'basic') return undefined;
  const decoded = Buffer.from(credentials, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : decoded.slice(colon + 1);
}

/** The connection's peer address as Node's server saw it; undefined for a request that came through no socket. */
function remoteAddressOf(serverContext: unknown): string | undefined {
  return (serverContext as { req?: IncomingMessage } | undefined)?.req?.socket?.remoteAddress;
}

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (a dual-stack socket's form). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

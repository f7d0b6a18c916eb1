import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Plugin } from 'graphql-yoga';

/** The operators' pages: every licensee's ids, budget use and errors, not for clients. */
export const OPERATORS_PATHS: ReadonlySet<string> = new Set(['/metrics', '/status', '/status.json']);

/** What the operators' listener answers without the token too: the orchestrators' probes. */
const PROBE_PATHS = new Set(['/health', '/ready']);

const REALM = 'realm="gateway operators"';

type Refuse = (status: number, message: string, headers?: Record<string, string>) => void;

const refusal =
  (endResponse: (response: Response) => void, fetchAPI: { Response: typeof Response }): Refuse =>
  (status, message, headers = {}) =>
    endResponse(
      new fetchAPI.Response(`${message}\n`, {
        status,
        headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers },
      }),
    );

/**
 * On the clients' port: the operators' pages are not there, whoever asks (a proxy or a mesh
 * sidecar on this machine makes every client's connection a loopback one, so the address proves
 * nothing). They are served on OPS_PORT; the answer does not say where.
 */
export function useOperatorsElsewhere(): Plugin {
  return {
    onRequest({ url, endResponse, fetchAPI }) {
      if (!OPERATORS_PATHS.has(url.pathname)) return;
      refusal(endResponse, fetchAPI)(
        404,
        `${url.pathname} is not served here: it is on the gateway's operators' port.`,
      );
    },
  };
}

/**
 * On the operators' port (OPS_PORT), every page but the probes for operators only. With
 * OPS_TOKEN: a request must carry it, as `Authorization: Bearer <OPS_TOKEN>` (Prometheus'
 * `authorization: {credentials: …}`) or as the password of `Authorization: Basic` (what a browser
 * prompts for, and then sends with the status page's own requests; any user name). Without
 * OPS_TOKEN (only allowed on a loopback OPS_HOST): a connection from this machine, by its address
 * (a header could say anything), is served.
 */
export function useOperatorsOnly(opsToken: string | undefined): Plugin {
  // Compared as digests: equal lengths for timingSafeEqual, and no early exit on the first wrong character.
  const expected = opsToken === undefined ? undefined : digest(opsToken);
  return {
    onRequest({ request, url, serverContext, endResponse, fetchAPI }) {
      if (PROBE_PATHS.has(url.pathname)) return;
      const refuse = refusal(endResponse, fetchAPI);
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

/** Last on the operators' port: what no plugin before answered is not there (no GraphQL on this port). */
export function useNothingElse(): Plugin {
  return {
    onRequest({ url, endResponse, fetchAPI }) {
      refusal(endResponse, fetchAPI)(404, `${url.pathname} is not served on the operators' port.`);
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

import type { Plugin } from 'graphql-yoga';
import { ErrorCode } from '../error-codes.ts';

/**
 * DNS rebinding: a page of another site points its own name at the gateway's address (a
 * developer's 127.0.0.1, say), and the browser then sends that page's requests, with the page's
 * name in `Host`, to the gateway as same-origin requests. Answering only the names in
 * ALLOWED_HOSTS ends that: the attacker's name is never one of them.
 */

/** The host name of a `Host` header's value, lowercase and without its port; undefined when it is not one. */
export function hostNameOf(value: string): string | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::\d{1,5})?$/.exec(value.trim().toLowerCase());
  return match?.[1];
}

/**
 * Whether a request's `Host` names this gateway. A request without one is not a browser's (every
 * browser sends it; Node refuses HTTP/1.1 without it): an HTTP/1.0 client, or a call in-process.
 */
export function isAllowedHost(host: string | null | undefined, allowedHosts: readonly string[]): boolean {
  if (host === null || host === undefined) return true;
  const name = hostNameOf(host);
  return name !== undefined && allowedHosts.includes(name);
}

/** Paths orchestrators' probes call by the instance's address, whatever name they use. */
const ANY_HOST_PATHS = new Set(['/health', '/ready']);

/**
 * Refuses every request whose `Host` is not in ALLOWED_HOSTS with 421 Misdirected Request (probes
 * aside). `serves` says which names are answered instead (the operators' port has its own).
 */
export function useAllowedHosts(
  allowedHosts: readonly string[],
  serves = 'the names of its ALLOWED_HOSTS setting',
): Plugin {
  return {
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (ANY_HOST_PATHS.has(url.pathname)) return;
      const host = request.headers.get('host');
      if (host === null || isAllowedHost(host, allowedHosts)) return;
      const shown = JSON.stringify(host.length > 100 ? `${host.slice(0, 100)}…` : host);
      const message = `This gateway does not answer for the host name ${shown}: it serves only ${serves}. Use one of those names in the URL.`;
      const body = JSON.stringify({ errors: [{ message, extensions: { code: ErrorCode.MISDIRECTED_REQUEST } }] });
      endResponse(
        new fetchAPI.Response(body, { status: 421, headers: { 'content-type': 'application/json; charset=utf-8' } }),
      );
    },
  };
}

import type { Plugin } from 'graphql-yoga';

/**
 * For an HTML answer with no policy of its own: nothing runs, nothing loads, nobody frames it.
 * The pages that run scripts (GraphiQL, /status) set their own, each with `frame-ancestors 'none'`.
 */
export const DEFAULT_HTML_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * Headers every answer carries: a browser never guesses a type other than the one sent
 * (`nosniff`: a JSON error echoing a client's text is never run as HTML or script), and no
 * address of the gateway (with its query string) leaks to another site in `Referer`. An HTML answer
 * also gets a Content-Security-Policy and may not be framed.
 */
export function useSecurityHeaders(): Plugin {
  return {
    onResponse({ response }) {
      const headers = response.headers;
      headers.set('x-content-type-options', 'nosniff');
      headers.set('referrer-policy', 'no-referrer');
      if (!headers.get('content-type')?.startsWith('text/html')) return;
      const policy = headers.get('content-security-policy');
      if (!policy) headers.set('content-security-policy', DEFAULT_HTML_POLICY);
      else if (!/(^|;)\s*frame-ancestors\s/.test(policy))
        headers.set('content-security-policy', `${policy}; frame-ancestors 'none'`);
      headers.set('x-frame-options', 'DENY');
    },
  };
}

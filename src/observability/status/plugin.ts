import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Plugin } from 'graphql-yoga';
import type { GatewayMetrics } from '../metrics/gateway-metrics.ts';
import { BudgetHistory } from './budget-history.ts';
import { statusSnapshot } from './snapshot.ts';

const PAGE = readFileSync(new URL('./page.html', import.meta.url), 'utf8');

/** The hashes of the page's inline elements of a kind (`script`, `style`), as a policy lists them. */
const hashesOf = (tag: string) =>
  [...PAGE.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))]
    .map((match) => `'sha256-${createHash('sha256').update(match[1]!, 'utf8').digest('base64')}'`)
    .join(' ');

/**
 * The page runs its own inline script and style, by their hashes (nothing injected into it could
 * run), fetches only from the gateway (nothing from a CDN), and no other site may frame it.
 */
const PAGE_POLICY = `default-src 'none'; script-src ${hashesOf('script')}; style-src ${hashesOf('style')}; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

/**
 * `/status`: one HTML page for operators (budget chart, queue, token age, cache hit ratio, error
 * rate, pollers, webhook endpoints' health, last errors), refreshing itself from `/status.json`, which reads the /metrics registry.
 */
export function useStatusPage(metrics: GatewayMetrics, licensees: readonly string[], history: BudgetHistory): Plugin {
  return {
    // Not async: a hook that returns a promise makes every request wait a turn for it.
    onRequest({ url, endResponse, fetchAPI }) {
      if (url.pathname === '/status') {
        endResponse(
          new fetchAPI.Response(PAGE, {
            headers: {
              'content-type': 'text/html; charset=utf-8',
              'content-security-policy': PAGE_POLICY,
              'cache-control': 'no-store',
            },
          }),
        );
      } else if (url.pathname === '/status.json') {
        return statusSnapshot(metrics, history, licensees).then((snapshot) =>
          endResponse(
            new fetchAPI.Response(JSON.stringify(snapshot), {
              headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
            }),
          ),
        );
      }
    },
  };
}

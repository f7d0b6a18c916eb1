import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserGateway, browserOrSkip, startBrowserGateway } from '../helpers/browser.ts';
import { subscribeSse } from '../helpers/subscriptions.ts';

/**
 * The status page in headless Chromium while a load runs. Its chart draws, its numbers
 * are those of /metrics, and its screenshot is docs/operating.md's (docs/images/status.png, with
 * UPDATE_SCREENSHOTS=1). Without a
 * browser the suite is skipped with an install hint; under REQUIRE_BROWSER=1 it fails instead.
 */
const CHROMIUM = browserOrSkip();
/** docs/operating.md's screenshot, rewritten only when asked (UPDATE_SCREENSHOTS=1): a run leaves the tree as it was. */
const SCREENSHOT =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? new URL('../../docs/images/status.png', import.meta.url)
    : pathToFileURL(join(mkdtempSync(join(tmpdir(), 'reservation-gateway-status-')), 'status.png'));

let t: BrowserGateway;
let base: string;

beforeAll(async () => {
  // A slow poller: its baseline read is the only polling within the test, so the counts hold still.
  // Neither pages nor answers kept between operations, so the load spends budget the chart can show.
  if (CHROMIUM)
    t = await startBrowserGateway(CHROMIUM, {
      CHANGES_POLL_INTERVAL_MS: '600000',
      UPSTREAM_PAGE_TTL_MS: '0',
      RESPONSE_CACHE: 'off',
    });
  // The operators' port: the page, its /status.json and /metrics are there, never on the clients' one.
  base = t?.opsUrl;
}, 60_000);

afterAll(async () => {
  await t?.close();
});

/** Each licensee's numbers as /metrics gives them, in the page's terms. */
async function fromMetrics(licensee: string): Promise<Record<string, string>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const values = (name: string, keep: (labels: string) => boolean = () => true) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(`${name}{`) && line.includes(`licensee="${licensee}"`) && keep(line))
      .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  const requests = values('gateway_upstream_requests_total');
  const failed = values(
    'gateway_upstream_requests_total',
    (line) => !/status="(2|3|4)\d\d"/.test(line) || line.includes('status="429"'),
  );
  const hits = values('gateway_upstream_cache_reads_total', (line) => line.includes('result="hit"'));
  const reads = values('gateway_upstream_cache_reads_total');
  return {
    'upstream-requests': String(requests),
    'upstream-error-rate': String(failed / requests),
    'cache-hit-ratio': String(hits / reads),
    queue: String(values('gateway_upstream_queue_length')),
    pollers: String(values('gateway_change_pollers')),
    'budget-used': String(values('gateway_upstream_budget_used')),
  };
}

describe.skipIf(!CHROMIUM)('the status page', () => {
  it('draws the budget chart during a load and shows the numbers of /metrics', async () => {
    const subscriber = await subscribeSse(fetch, t.url, { eventId: 5002 });
    const query = async (eventId: number) => {
      const res = await fetch(t.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          query: `query Load { event(eventId: ${eventId}) { name hotels { hotelId } reservations(first: 2) { edges { node { reservationNumber } } } } }`,
        }),
      });
      expect(res.status).toBe(200);
    };
    const load = (async () => {
      for (let round = 0; round < 10; round++) await Promise.all([5001, 5002, 5003, 5001].map(query));
    })();

    const page = await t.browser.newPage({ viewport: { width: 1200, height: 900 } });
    const outside: string[] = [];
    page.on('request', (req) => {
      if (!['127.0.0.1', 'localhost'].includes(new URL(req.url()).hostname)) outside.push(req.url());
    });
    await page.goto(`${base}/status`, { waitUntil: 'load' });
    await page.waitForSelector('[data-licensee="1001"] svg.chart polyline', { state: 'attached', timeout: 30_000 });
    await load;

    const shown = () =>
      page.$$eval('[data-licensee="1001"] [data-field]', (cells) =>
        Object.fromEntries(cells.map((cell) => [cell.getAttribute('data-field'), cell.getAttribute('data-value')])),
      );
    // The page refreshes itself: wait for a refresh after the load, then its numbers are /metrics'.
    await expect
      .poll(
        async () => {
          const [onPage, metrics] = [await shown(), await fromMetrics('1001')];
          return Object.fromEntries(Object.keys(metrics).map((field) => [field, onPage[field] === metrics[field]]));
        },
        { timeout: 20_000, interval: 500 },
      )
      .toEqual({
        'upstream-requests': true,
        'upstream-error-rate': true,
        'cache-hit-ratio': true,
        queue: true,
        pollers: true,
        'budget-used': true,
      });
    const onPage = await shown();
    expect(Number(onPage['upstream-requests'])).toBeGreaterThan(20);
    expect(onPage.pollers).toBe('1');
    expect(Number(onPage['cache-hit-ratio'])).toBeGreaterThan(0);
    expect(Number(await page.getAttribute('[data-licensee="1001"] svg.chart', 'data-points'))).toBeGreaterThan(0);
    expect(await page.textContent('[data-licensee="1001"] [data-field="token-age"]')).toMatch(/^\d+ s$/);

    mkdirSync(new URL('.', SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT.pathname, fullPage: true });
    expect(outside).toEqual([]);
    subscriber.close();
  }, 120_000);
});

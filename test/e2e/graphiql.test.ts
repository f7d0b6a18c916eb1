import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserGateway, browserOrSkip, startBrowserGateway } from '../helpers/browser.ts';

/**
 * GraphiQL in headless Chromium, with nothing beyond loopback. The browser is found (CHROMIUM_PATH,
 * then PATH); without one the suite is skipped with a message saying how to install one, and under
 * REQUIRE_BROWSER=1 (.ci/run) it fails instead.
 */
const CHROMIUM = browserOrSkip();
const ARTIFACTS = new URL('../artifacts/', import.meta.url);

let t: BrowserGateway;

beforeAll(async () => {
  if (CHROMIUM) t = await startBrowserGateway(CHROMIUM);
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe.skipIf(!CHROMIUM)('GraphiQL', () => {
  it('opens on the example query, runs it and shows the demo data', async () => {
    // Tall enough that the editors render the whole example result (they only draw visible lines).
    const page = await t.browser.newPage({ viewport: { width: 1400, height: 4000 } });
    const outside: string[] = [];
    // The page's Content-Security-Policy lets everything GraphiQL needs run, and nothing else.
    const refusedByPolicy: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) refusedByPolicy.push(message.text());
    });
    page.on('request', (req) => {
      const host = new URL(req.url()).hostname;
      if (
        !['127.0.0.1', 'localhost'].includes(host) &&
        !req.url().startsWith('data:') &&
        !req.url().startsWith('blob:')
      )
        outside.push(req.url());
    });
    const response = await page.goto(t.url, { waitUntil: 'load', timeout: 60_000 });
    expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(response?.headers()['content-encoding']).toMatch(/^(br|gzip)$/);
    await page.waitForSelector('.graphiql-execute-button', { timeout: 60_000 });
    // The editors render with non-breaking spaces: compare text with its spaces folded.
    const text = async (selector: string) => (await page.locator(selector).innerText()).replace(/\s+/g, ' ');
    await expect.poll(() => text('.graphiql-query-editor'), { timeout: 30_000 }).toContain('query EventPage');
    await page.click('.graphiql-execute-button');
    await expect.poll(() => text('.graphiql-response'), { timeout: 60_000 }).toContain('reservationNumber');
    const result = await text('.graphiql-response');
    expect(result).toContain('"totalCount": 25600');
    expect(result).toContain('"hotels"');
    expect(result).not.toContain('"errors"');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: new URL('graphiql.png', ARTIFACTS).pathname, fullPage: true });
    expect(outside).toEqual([]);
    expect(refusedByPolicy).toEqual([]);
  }, 150_000);
});

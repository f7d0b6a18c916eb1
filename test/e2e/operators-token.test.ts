import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserGateway, browserOrSkip, startBrowserGateway } from '../helpers/browser.ts';

/**
 * With OPS_TOKEN, the status page in headless Chromium: the browser is challenged, and the token
 * given as the password of its prompt (any user name) opens the page, whose own requests to
 * /status.json then carry it. Without it, nothing of the page is shown. Skipped without a browser,
 * as test/e2e/graphiql.test.ts.
 */
const CHROMIUM = browserOrSkip();
const OPS_TOKEN = 'ops-token-for-the-browser-0123456789';

let t: BrowserGateway;
let base: string;
beforeAll(async () => {
  if (CHROMIUM) t = await startBrowserGateway(CHROMIUM, { OPS_TOKEN });
  // The operators' port: the page, its /status.json and /metrics are there, never on the clients' one.
  base = t?.opsUrl;
}, 60_000);
afterAll(async () => {
  await t?.close();
});

describe.skipIf(!CHROMIUM)('the status page behind OPS_TOKEN', () => {
  it('is refused without the token or with another, and opens with it as the prompt’s password, refreshing from /status.json', async () => {
    // Challenged for a user name and password (a headless browser has no prompt to show: it gives up).
    const refused = await t.browser.newPage();
    await expect(refused.goto(`${base}/status`)).rejects.toThrow(/ERR_INVALID_AUTH_CREDENTIALS/);
    await refused.close();
    const wrong = await t.browser.newContext({ httpCredentials: { username: 'operator', password: 'not-the-token' } });
    expect((await (await wrong.newPage()).goto(`${base}/status`))?.status()).toBe(401);
    await wrong.close();

    const context = await t.browser.newContext({ httpCredentials: { username: 'operator', password: OPS_TOKEN } });
    const page = await context.newPage();
    const statusJson: number[] = [];
    page.on('response', (response) => {
      if (response.url().endsWith('/status.json')) statusJson.push(response.status());
    });
    const opened = await page.goto(`${base}/status`, { waitUntil: 'load' });
    expect(opened?.status()).toBe(200);
    await page.waitForSelector('[data-licensee="1001"]', { timeout: 30_000 });
    expect(statusJson.length).toBeGreaterThan(0);
    expect(statusJson.every((status) => status === 200)).toBe(true);
    await context.close();
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserGateway, browserOrSkip, startBrowserGateway } from '../helpers/browser.ts';
import { CLIENT_KEYS, licenseesEnv } from './licensees-fixture.ts';

/**
 * GraphiQL over GATEWAY_AUTH=api-key in headless Chromium: the page loads without a credential,
 * and the credential typed into its headers pane goes with the operation. Skipped without a
 * browser, as test/e2e/graphiql.test.ts.
 */
const CHROMIUM = browserOrSkip();

let t: BrowserGateway;

beforeAll(async () => {
  if (CHROMIUM) t = await startBrowserGateway(CHROMIUM, licenseesEnv());
}, 60_000);

afterAll(async () => {
  await t?.close();
});

describe.skipIf(!CHROMIUM)('GraphiQL with client authentication', () => {
  it('loads without a credential and sends the one typed into its headers pane', async () => {
    const page = await t.browser.newPage({ viewport: { width: 1400, height: 4000 } });
    const sent: (string | undefined)[] = [];
    page.on('request', (req) => {
      if (req.method() === 'POST' && req.url() === t.url) sent.push(req.headers()['x-api-key']);
    });
    const response = await page.goto(t.url, { waitUntil: 'load', timeout: 60_000 });
    expect(response?.status()).toBe(200);
    await page.waitForSelector('.graphiql-execute-button', { timeout: 60_000 });
    const text = async (selector: string) => (await page.locator(selector).innerText()).replace(/\s+/g, ' ');
    // The pane opens on a placeholder: replace it, then drop what the editor auto-closed after the cursor.
    const headersEditor = page.locator('.graphiql-editor-tool .graphiql-editor:visible').first();
    await expect
      .poll(async () => (await headersEditor.innerText()).replace(/\s+/g, ' '), { timeout: 30_000 })
      .toContain('Bearer <your API key>');
    await headersEditor.getByText('Authorization').click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.insertText(JSON.stringify({ 'X-Api-Key': CLIENT_KEYS['acme-web'] }));
    await page.keyboard.press('ControlOrMeta+Shift+End');
    await page.keyboard.press('Delete');
    await page.click('.graphiql-execute-button');
    await expect.poll(() => text('.graphiql-response'), { timeout: 60_000 }).toContain('reservationNumber');
    expect(await text('.graphiql-response')).toContain('"totalCount": 25600');
    expect(sent).toContain(CLIENT_KEYS['acme-web']);
  }, 150_000);
});

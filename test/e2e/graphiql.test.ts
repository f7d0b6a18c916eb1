import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startEmulator, type Emulator } from '../../src/emulator/server.ts';
import { createGateway, type Gateway } from '../../src/server.ts';
import { browserOrSkip } from '../helpers/browser.ts';

/**
 * GraphiQL in headless Chromium, with nothing beyond loopback. The browser is found (CHROMIUM_PATH,
 * then PATH); without one the suite is skipped with a message saying how to install one, and under
 * REQUIRE_BROWSER=1 (.ci/run) it fails instead.
 */
const CHROMIUM = browserOrSkip();
const ARTIFACTS = new URL('../artifacts/', import.meta.url);

let emulator: Emulator;
let gateway: Gateway;
let server: Server;
let browser: Browser;
let url: string;

beforeAll(async () => {
  if (!CHROMIUM) return;
  emulator = await startEmulator({ port: 0 });
  const config = loadConfig({ LOG_LEVEL: 'silent' });
  gateway = createGateway({ ...config, upstreamBaseUrl: emulator.url });
  server = createServer(gateway.yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await gateway?.close();
  await emulator?.close();
});

describe.skipIf(!CHROMIUM)('GraphiQL', () => {
  it('opens on the example query, runs it and shows the demo data', async () => {
    // Tall enough that the editors render the whole example result (they only draw visible lines).
    const page = await browser.newPage({ viewport: { width: 1400, height: 4000 } });
    const outside: string[] = [];
    page.on('request', (req) => {
      const host = new URL(req.url()).hostname;
      if (!['127.0.0.1', 'localhost'].includes(host) && !req.url().startsWith('data:') && !req.url().startsWith('blob:')) outside.push(req.url());
    });
    await page.goto(url, { waitUntil: 'load', timeout: 60_000 });
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
  }, 150_000);
});

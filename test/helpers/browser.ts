import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium } from 'playwright-core';
import { loadConfig } from '../../src/config/environment.ts';
import { startEmulator } from '../../src/emulator/server.ts';
import { createGateway } from '../../src/gateway.ts';
import { findProgram, programOrSkip, type SystemProgram } from './system-program.ts';

/** Names Chromium goes by on PATH, in the order they are tried. */
const NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];

export const INSTALL_HINT =
  'no Chromium found: set CHROMIUM_PATH to a Chromium or Chrome binary, or install one (Debian/Ubuntu: `apt-get install chromium`)';

const CHROMIUM: SystemProgram = {
  tests: 'browser',
  pathVariable: 'CHROMIUM_PATH',
  names: NAMES,
  requireVariable: 'REQUIRE_BROWSER',
  installHint: INSTALL_HINT,
};

/**
 * The browser the browser tests drive: `CHROMIUM_PATH` when set, else the first of the usual names
 * on `PATH`; undefined when there is none. playwright-core downloads nothing here.
 */
export function findChromium(env: Record<string, string | undefined> = process.env): string | undefined {
  return findProgram(CHROMIUM, env);
}

/**
 * Whether the browser tests run: with a browser yes; without one they are skipped with a message
 * saying how to install one, except under REQUIRE_BROWSER=1 (CI), where a missing browser fails.
 */
export function browserOrSkip(env: Record<string, string | undefined> = process.env): string | undefined {
  return programOrSkip(CHROMIUM, env);
}

/** A gateway on a real port over its own emulator, and headless Chromium to open it in. */
export interface BrowserGateway {
  /** The gateway's /graphql address. */
  url: string;
  browser: Browser;
  close(): Promise<void>;
}

/** Starts an emulator, a gateway with the given settings on 127.0.0.1:0, and Chromium from `chromiumPath`. */
export async function startBrowserGateway(
  chromiumPath: string,
  env: Record<string, string> = {},
): Promise<BrowserGateway> {
  const emulator = await startEmulator({ port: 0 });
  const gateway = createGateway({ ...loadConfig({ LOG_LEVEL: 'silent', ...env }), upstreamBaseUrl: emulator.url });
  const server = createServer(gateway.yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    browser,
    async close() {
      await browser.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await gateway.close();
      await emulator.close();
    },
  };
}

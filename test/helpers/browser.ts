import { type Browser, chromium } from 'playwright-core';
import { loadConfig } from '../../src/config/environment.ts';
import { startEmulator } from '../../src/emulator/server.ts';
import { createGateway } from '../../src/gateway.ts';
import { listen } from '../../src/http/listeners.ts';
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
  /** The operators' port's origin (its /status, /status.json and /metrics). */
  opsUrl: string;
  browser: Browser;
  close(): Promise<void>;
}

/**
 * Starts an emulator, a gateway with the given settings listening as main.ts does (both ports on
 * 127.0.0.1:0), and Chromium from `chromiumPath`.
 */
export async function startBrowserGateway(
  chromiumPath: string,
  env: Record<string, string> = {},
): Promise<BrowserGateway> {
  const emulator = await startEmulator({ port: 0 });
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
  const gateway = createGateway({ ...config, upstreamBaseUrl: emulator.url });
  const listening = await listen(
    { clients: gateway.yoga, operators: gateway.operators, acceptWebSockets: gateway.acceptWebSockets },
    { ...config, port: 0, host: '127.0.0.1', opsPort: 0, opsHost: '127.0.0.1' },
  );
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
    url: listening.url,
    opsUrl: listening.opsUrl,
    browser,
    async close() {
      await browser.close();
      listening.clients.closeAllConnections();
      listening.operators.closeAllConnections();
      await listening.stop();
      await gateway.close();
      await emulator.close();
    },
  };
}

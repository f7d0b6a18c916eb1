import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Names Chromium goes by on PATH, in the order they are tried. */
const NAMES = ['chromium', 'chromium-browser', 'google-chrome-stable', 'google-chrome'];

export const INSTALL_HINT =
  'no Chromium found: set CHROMIUM_PATH to a Chromium or Chrome binary, or install one (Debian/Ubuntu: `apt-get install chromium`)';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The browser the browser tests drive: `CHROMIUM_PATH` when set, else the first of the usual names
 * on `PATH`; undefined when there is none. playwright-core downloads nothing here.
 */
export function findChromium(env: Record<string, string | undefined> = process.env): string | undefined {
  if (env.CHROMIUM_PATH) return executable(env.CHROMIUM_PATH) ? env.CHROMIUM_PATH : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of NAMES) {
      const candidate = join(dir, name);
      if (executable(candidate)) return candidate;
    }
  }
  return undefined;
}

/**
 * Whether the browser tests run: with a browser yes; without one they are skipped with a message
 * saying how to install one, except under REQUIRE_BROWSER=1 (CI), where a missing browser fails.
 */
export function browserOrSkip(env: Record<string, string | undefined> = process.env): string | undefined {
  const found = findChromium(env);
  if (found) return found;
  if (env.REQUIRE_BROWSER === '1') throw new Error(`REQUIRE_BROWSER=1 but ${INSTALL_HINT}`);
  console.warn(`Skipping the browser tests: ${INSTALL_HINT}`);
  return undefined;
}

import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FREE_PORTS, GATEWAY_MAIN, ROOT } from '../helpers/built-gateway.ts';
import { run } from '../helpers/run.ts';

/**
 * The gateway (`dist/main.js`) on a port another program holds. Fault: a second copy on one host,
 * or the default OPS_PORT 9464 held by another exporter, ended the process with Node's unhandled
 * `Error: listen EADDRINUSE` and its stack (exit 1). Now it is a setting to fix like a bad value:
 * one line naming the setting and the address, exit status 2.
 */

let holder: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve())));

/** A port held by a listener of the test's own, as another program would hold it. */
async function takenPort(): Promise<number> {
  holder = createServer();
  await new Promise<void>((resolve) => holder!.listen(0, '127.0.0.1', resolve));
  return (holder.address() as { port: number }).port;
}

/** Runs the built gateway with `env` until it exits. */
function start(env: Record<string, string>) {
  return run(process.execPath, [GATEWAY_MAIN], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', OPS_HOST: '127.0.0.1', ...FREE_PORTS, ...env },
  });
}

describe('a port the gateway cannot take', () => {
  for (const setting of ['PORT', 'OPS_PORT'] as const) {
    it(`${setting} taken: exit status 2, one line naming ${setting} and the address, no stack`, async () => {
      const port = await takenPort();
      const refused = await start({ [setting]: String(port) });
      expect(refused.code, refused.output).toBe(2);
      expect(refused.stderr.trimEnd().split('\n'), refused.output).toEqual([
        `${setting}: cannot listen on 127.0.0.1:${port}: the address is already in use (another program, or another copy of the gateway, listens there); stop it, or set another ${setting}`,
      ]);
      expect(refused.output).not.toMatch(/EADDRINUSE|\n\s+at |"stack"/);
      expect(refused.stdout).not.toContain('ready');
    }, 60_000);
  }
});

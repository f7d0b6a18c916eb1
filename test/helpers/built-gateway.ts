import { fileURLToPath } from 'node:url';

/**
 * The compiled gateway, as `npm start` and the image run it: dist/, built once for the whole run by
 * test/build/global-setup.ts when it is missing or older than the sources. Tests that start the
 * gateway as a process of its own run `node <GATEWAY_MAIN>` with the repository as working folder:
 * no tsx compiling every source again in each process (about 1.4 s of CPU a start).
 */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DIST = fileURLToPath(new URL('../../dist', import.meta.url));
export const GATEWAY_MAIN = 'dist/main.js';

/**
 * The ports of a gateway process a test starts: free ones (0), never PORT 4000 or OPS_PORT 9464,
 * which another program or another test file's gateway may hold (a taken port stops the start, exit 2).
 */
export const FREE_PORTS = { PORT: '0', OPS_PORT: '0' } as const;

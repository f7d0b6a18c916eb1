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

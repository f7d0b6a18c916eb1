import { readFileSync } from 'node:fs';

/**
 * The gateway's package.json, read from beside src/ and dist/. This module sits at their top level
 * so that the path is the same from `src/package-info.ts` (tsx), `dist/package-info.js` and the
 * bundle `dist/main.js` that holds it once built (scripts/build.mjs).
 */
export const PACKAGE = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  name: string;
  version: string;
};

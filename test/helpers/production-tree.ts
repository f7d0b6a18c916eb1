/**
 * What a production install is made of: the files of the repository the Dockerfile's runtime stage
 * copies from its build stage, and test/e2e/production-install.test.ts copies into an empty folder.
 * test/deploy/image.test.ts checks the Dockerfile copies exactly these.
 */
export const PRODUCTION_TREE = [
  'package.json',
  'package-lock.json',
  'scripts/install-production.sh',
  // `npm start`: runs dist/ as it is when no source is there to make it stale.
  'scripts/start.mjs',
  'scripts/staleness.mjs',
  'dist',
] as const;

/** Dev dependencies the test names outright, besides checking every installed package against the lock file. */
export const NEVER_IN_PRODUCTION = [
  'tsx',
  'typescript',
  'vitest',
  '@biomejs/biome',
  'autocannon',
  'playwright-core',
  'yaml',
  'esbuild',
] as const;

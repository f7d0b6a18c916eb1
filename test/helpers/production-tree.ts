/**
 * What a production install is made of: the files of the repository test/e2e/production-install.test.ts
 * copies into an empty folder before scripts/install-production.sh. The image's runtime tree is
 * these too (scripts/image/trace.mjs keeps them, test/deploy/image.test.ts checks), without the
 * install script: its node_modules is traced from the build stage's instead.
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

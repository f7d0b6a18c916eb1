import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Suites start their own emulators on port 0; two workers match the 2-core machines.
    pool: 'forks',
    maxWorkers: 2,
  },
});

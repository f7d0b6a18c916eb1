import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import StartFirstSequencer from './test/sequencer.ts';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql 16 ships CJS and ESM builds; Node loads the CJS one for Pothos and Yoga, so tests must
    // use the same copy or its classes differ ("another module or realm").
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The run-wide secret scan: every worker records what the gateway writes, the teardown scans it.
    // dist/ built once when stale: the tests that start the gateway as a process run the compiled one.
    globalSetup: ['test/secret-scan/global-setup.ts', 'test/build/global-setup.ts'],
    setupFiles: ['test/secret-scan/setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Suites start their own emulators on port 0. Three workers on the 2-core machines: the slowest
    // files wait on leases, rate windows and child processes more than they compute, and with two
    // the cores sat idle about a third of the time (152.58 s against about 200 s on Node 20,
    // docs/benchmarks.md). Under three workers' contention a read through a second in-process
    // replica once beat that replica's hearing of a response-cache drop on Redis pub/sub; replicas
    // now check the drop counter in Redis before serving a kept answer (replica-drops.ts), so that
    // race is closed in the product. The files that wait on child processes and real time start
    // first (test/sequencer.ts), so that their waiting overlaps the other files' work.
    pool: 'forks',
    maxWorkers: 3,
    sequence: { sequencer: StartFirstSequencer },
    // A worker keeps its modules from one test file to the next instead of importing Yoga, Pothos
    // and the gateway again for each of the 121 files (about 1.4 s of import a file). No test file
    // mocks a module of its own or leaves a global changed; the secret scan's setup patches once a
    // worker (test/secret-scan/setup.ts).
    isolate: false,
  },
});

import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that mostly wait rather than compute: on child processes (a registry's `npm ci`,
 * podman, Hive Gateway, the client toolchains, replicas) or on real rate windows and a replica's
 * death being noticed. They start first, longest first, so that their waiting overlaps the other
 * files' work instead of ending the run; a fresh clone has no timings of an earlier run for vitest
 * to sort by. test/repository.test.ts checks every name here is a test file.
 */
export const START_FIRST = [
  'test/redis/webhooks-outage.test.ts',
  'test/redis/replicas.test.ts',
  'test/redis/soak.test.ts',
  'test/e2e/production-install.test.ts',
  'test/e2e/clients.test.ts',
  'test/e2e/image.test.ts',
  'test/e2e/image-memory.test.ts',
  'test/redis/callbacks.test.ts',
  'test/redis/outage-logs.test.ts',
  'test/e2e/federation-example.test.ts',
  'test/changes/feed-replicas.test.ts',
] as const;

/** vitest's own order (failed first, then the slowest of the last run), START_FIRST ahead of it. */
export default class StartFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const at = (START_FIRST as readonly string[]).indexOf(relative(file.project.config.root, file.moduleId));
      return at === -1 ? START_FIRST.length : at;
    };
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}

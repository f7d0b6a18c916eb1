import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, inject } from 'vitest';
import type { OutputKind, SecretKind } from './scan.ts';

/**
 * Appends to the recording of the running test file (one JSON line a record) in the directory the
 * global setup chose. Synchronous, so a record is on disk before the worker can exit.
 */
function recordingPath(): string | undefined {
  const dir = inject('secretScanDir');
  const testPath = expect.getState().testPath;
  return dir && testPath ? join(dir, recordingName(testPath)) : undefined;
}

/** The recording of a test file, named by its path in the repository: test/e2e/fuzz.test.ts → test_e2e_fuzz.test.ts.jsonl. */
export const recordingName = (testPath: string): string =>
  `${testPath.slice(testPath.lastIndexOf('/test/') + 1).replace(/[^A-Za-z0-9.-]/g, '_')}.jsonl`;

function append(record: object): void {
  const path = recordingPath();
  if (path) appendFileSync(path, `${JSON.stringify(record)}\n`);
}

export const recordSecret = (kind: SecretKind, value: string): void => append({ type: 'secret', kind, value });
export const recordOutput = (kind: OutputKind, text: string): void => append({ type: 'output', kind, text });

declare module 'vitest' {
  export interface ProvidedContext {
    secretScanDir: string;
  }
}

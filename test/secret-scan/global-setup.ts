import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { TestProject } from 'vitest/node';
import { describeFindings, readRecordings, scanRecordings } from './scan.ts';

/**
 * Chooses where every test worker records what the gateway wrote (SECRET_SCAN_DIR, or a fresh
 * temporary directory), and after the whole run scans it: a secret found fails the run, with a
 * message naming the test file and the kind of secret. `.ci/run` runs the same scan as a step of
 * its own (cli.ts), so a finding also counts in its last line.
 */
export default function setup(project: TestProject): () => void {
  const chosen = process.env.SECRET_SCAN_DIR;
  const dir = chosen ?? mkdtempSync(`${tmpdir()}/secret-scan-`);
  mkdirSync(dir, { recursive: true });
  project.provide('secretScanDir', dir);
  return () => {
    const findings = scanRecordings(readRecordings(dir));
    if (findings.length > 0) {
      // Vitest reports an error thrown here but still exits 0: the exit code is set as well.
      process.exitCode = 1;
      throw new Error(`${describeFindings(findings)}\n(recordings kept in ${dir})`);
    }
    if (!chosen) rmSync(dir, { recursive: true, force: true });
  };
}

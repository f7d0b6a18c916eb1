import { describeFindings, readRecordings, scanRecordings } from './scan.ts';

/** `node --import tsx test/secret-scan/cli.ts <dir>`: the run-wide secret scan as a step of `.ci/run`; exit 1 on a finding. */
const dir = process.argv[2];
if (!dir) {
  console.error('usage: cli.ts <directory of recordings (SECRET_SCAN_DIR)>');
  process.exit(2);
}
const recordings = readRecordings(dir);
const findings = scanRecordings(recordings);
if (findings.length > 0) {
  console.error(describeFindings(findings));
  process.exit(1);
}
console.log(`Secret scan: no secret in what the gateway wrote (${recordings.size} test files recorded).`);

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The secret scan of a whole test run: what the gateway wrote (responses, log lines) is searched
 * for every secret the run knew (upstream keys, client keys, secret settings, the tokens the
 * emulator issued). A finding names the test file and the kind of secret, never the secret.
 */

export type SecretKind = 'upstream key' | 'client key' | 'secret setting' | 'upstream token';
export type OutputKind = 'response' | 'log';

/** One line of a recording: a secret the run knew, or something the gateway wrote. */
export type ScanRecord =
  | { type: 'secret'; kind: SecretKind; value: string }
  | { type: 'output'; kind: OutputKind; text: string };

export interface Finding {
  /** The recording (one per test file) where the secret was written. */
  file: string;
  secret: SecretKind;
  output: OutputKind;
}

/** Shorter values (a one-letter test key) would match by chance. */
const MIN_SECRET_LENGTH = 8;

/** Finds every secret known anywhere in the run in what any test file's gateway wrote. */
export function scanRecordings(recordings: Map<string, ScanRecord[]>): Finding[] {
  const secrets = new Map<string, SecretKind>();
  for (const records of recordings.values())
    for (const record of records)
      if (record.type === 'secret' && record.value.length >= MIN_SECRET_LENGTH && !secrets.has(record.value))
        secrets.set(record.value, record.kind);
  const findings = new Map<string, Finding>();
  for (const [file, records] of recordings)
    for (const record of records) {
      if (record.type !== 'output') continue;
      for (const [value, kind] of secrets) {
        if (!record.text.includes(value)) continue;
        const finding = { file, secret: kind, output: record.kind };
        findings.set(JSON.stringify(finding), finding);
      }
    }
  return [...findings.values()];
}

/** Reads every recording (`*.jsonl`) in `dir`; a torn last line (a worker that died mid-write) is skipped. */
export function readRecordings(dir: string): Map<string, ScanRecord[]> {
  const recordings = new Map<string, ScanRecord[]>();
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.jsonl'))) {
    const records: ScanRecord[] = [];
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      if (line === '') continue;
      try {
        records.push(JSON.parse(line) as ScanRecord);
      } catch {
        // Only a worker killed while appending leaves a partial line.
      }
    }
    recordings.set(name, records);
  }
  return recordings;
}

/** The failure message: where and what kind, never the secret itself. */
export function describeFindings(findings: Finding[]): string {
  const lines = findings.map(
    (f) => `  ${f.file}: ${f.secret} in a ${f.output === 'log' ? 'log line' : 'response'} of the gateway`,
  );
  return `Secret scan: ${findings.length} finding(s) in what the gateway wrote during the test run:\n${lines.join('\n')}`;
}

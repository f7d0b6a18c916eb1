import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeFindings, readRecordings, type ScanRecord, scanRecordings } from './scan.ts';

/** The scanner must catch a planted secret, or the run-wide scan could never fail. */
describe('the secret scanner', () => {
  const secret = (kind: 'upstream key' | 'upstream token', value: string): ScanRecord => ({
    type: 'secret',
    kind,
    value,
  });
  const output = (kind: 'response' | 'log', text: string): ScanRecord => ({ type: 'output', kind, text });

  it('finds a token issued in one test file in a log line of another, naming file and kind but not the token', () => {
    const token = 'Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4';
    const recordings = new Map([
      [
        'test_upstream_client.test.ts.jsonl',
        [secret('upstream token', token), output('response', '{"data":{"event":null}}')],
      ],
      [
        'test_graphql_errors.test.ts.jsonl',
        [output('log', `{"level":30,"msg":"calling upstream with token=${token}"}`)],
      ],
    ]);
    const findings = scanRecordings(recordings);
    expect(findings).toEqual([{ file: 'test_graphql_errors.test.ts.jsonl', secret: 'upstream token', output: 'log' }]);
    const message = describeFindings(findings);
    expect(message).toContain('test_graphql_errors.test.ts.jsonl: upstream token in a log line');
    expect(message).not.toContain(token);
  });

  it('finds an upstream key in a response, and nothing in clean output or for too-short values', () => {
    const recordings = new Map([
      [
        'a.jsonl',
        [
          secret('upstream key', 'demo-key-1001'),
          secret('upstream key', 'k'),
          output('response', 'k is everywhere, keys are not'),
        ],
      ],
      ['b.jsonl', [output('response', '{"errors":[{"message":"bad key demo-key-1001"}]}')]],
    ]);
    expect(scanRecordings(recordings)).toEqual([{ file: 'b.jsonl', secret: 'upstream key', output: 'response' }]);
    expect(
      scanRecordings(new Map([['a.jsonl', [secret('upstream key', 'demo-key-1001'), output('log', 'all clean')]]])),
    ).toEqual([]);
  });

  it('reads recordings from a directory, skipping a torn last line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'secret-scan-test-'));
    const lines = [
      JSON.stringify(secret('upstream key', 'demo-key-2002')),
      JSON.stringify(output('log', 'key demo-key-2002')),
      '{"type":"out',
    ];
    writeFileSync(join(dir, 'x.jsonl'), lines.join('\n'));
    expect(scanRecordings(readRecordings(dir))).toEqual([{ file: 'x.jsonl', secret: 'upstream key', output: 'log' }]);
  });
});

import { expect, inject, it, vi } from 'vitest';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';
import { startGateway } from '../helpers/gateway.ts';
import { recordingName } from './recorder.ts';
import { readRecordings, type ScanRecord, scanRecordings } from './scan.ts';

/*
 * The run-wide scan can only fail if the recording is wired: a gateway built the usual way (the
 * test helper) must leave its answers, its log lines and the emulator's tokens in this file's
 * recording, and a token planted in one of those lines must be found.
 */
it('a gateway’s answers and log lines, and the tokens the emulator issued, are recorded; a leaked token would be found', async () => {
  const t = await startGateway(undefined, { ...licenseesEnv(), GATEWAY_AUTH: 'api-key' });
  const res = await t.exec('{ event(eventId: 5001) { name } }', undefined, {
    authorization: `Bearer ${CLIENT_KEYS['acme-web']}`,
  });
  await t.close();
  expect(res.errors).toBeUndefined();

  const name = recordingName(expect.getState().testPath!);
  const records = () => readRecordings(inject('secretScanDir')).get(name) ?? [];
  // The answer's body is recorded from a clone, once read.
  await vi.waitFor(() =>
    expect(
      records().some((r) => r.type === 'output' && r.kind === 'response' && r.text.includes(JSON.stringify(res.data))),
    ).toBe(true),
  );
  const recorded = records();
  expect(recorded.some((r) => r.type === 'output' && r.kind === 'log')).toBe(true);
  const kinds = new Set(recorded.flatMap((r) => (r.type === 'secret' ? [r.kind] : [])));
  expect([...kinds].sort()).toEqual(['client key', 'secret setting', 'upstream key', 'upstream token']);

  expect(scanRecordings(new Map([[name, recorded]]))).toEqual([]);
  const token = recorded.find(
    (r): r is Extract<ScanRecord, { type: 'secret' }> => r.type === 'secret' && r.kind === 'upstream token',
  )!.value;
  const leaked: ScanRecord = { type: 'output', kind: 'log', text: `{"msg":"calling with ${token}"}` };
  expect(scanRecordings(new Map([[name, [...recorded, leaked]]]))).toEqual([
    { file: name, secret: 'upstream token', output: 'log' },
  ]);
});

import { vi } from 'vitest';
import { EmulatorState } from '../../src/emulator/state.ts';
import { CLIENT_KEYS } from '../auth/licensees-fixture.ts';
import { recordResponse } from './record-gateway.ts';
import { recordSecret } from './recorder.ts';

/*
 * Runs before every test file (vitest `setupFiles`): records, for the run-wide secret scan, every
 * secret the file's tests know and everything the gateway writes. Nothing the tests see changes:
 * - createGateway's gateway records each answer; one built without a logger gets one at `trace`
 *   writing only to the recording, so every line the gateway would log at any level is scanned;
 * - createLogger's lines go to their destination and to the recording;
 * - loadConfig records the upstream keys it resolves and the key, secret and token settings of the
 *   env a test hands it (never the process environment);
 * - the emulator records each token it issues;
 * - answers of a gateway reached with fetch on a port (a child process), and the output of child
 *   processes (`npm start`), are recorded too.
 */

vi.mock('../../src/gateway.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/gateway.ts')>();
  const { createLogger } = await vi.importActual<typeof import('../../src/observability/logger.ts')>(
    '../../src/observability/logger.ts',
  );
  const { recordingGateway } = await import('./record-gateway.ts');
  const { recordOutput: record } = await import('./recorder.ts');
  const createGateway: typeof actual.createGateway = (config, logger, options) =>
    recordingGateway(
      actual.createGateway(
        config,
        logger ?? createLogger('trace', { write: (line: string) => record('log', line) }),
        options,
      ),
    );
  return { ...actual, createGateway };
});

vi.mock('../../src/observability/logger.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/observability/logger.ts')>();
  const { recordOutput: record } = await import('./recorder.ts');
  const createLogger: typeof actual.createLogger = (level, destination) =>
    actual.createLogger(level, {
      write(line: string) {
        record('log', line);
        if (destination) destination.write(line);
        else process.stdout.write(line);
      },
    });
  return { ...actual, createLogger };
});

vi.mock('../../src/config/environment.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/config/environment.ts')>();
  const { recordSecret: record } = await import('./recorder.ts');
  const loadConfig: typeof actual.loadConfig = (env) => {
    for (const [name, value] of Object.entries(env ?? {}))
      if (/KEY|SECRET|TOKEN/i.test(name) && value) record('secret setting', value);
    const config = env ? actual.loadConfig(env) : actual.loadConfig();
    for (const licensee of config.licensees) record('upstream key', licensee.account.key);
    return config;
  };
  return { ...actual, loadConfig };
});

vi.mock('node:child_process', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:child_process')>();
  const { recordOutput: record } = await import('./recorder.ts');
  const spawn = ((...args: Parameters<typeof actual.spawn>) => {
    const child = actual.spawn(...args);
    child.stdout?.on('data', (chunk: Buffer) => record('log', chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => record('log', chunk.toString('utf8')));
    return child;
  }) as typeof actual.spawn;
  return { ...actual, default: { ...actual, spawn }, spawn };
});

for (const key of ['demo-key-1001', 'demo-key-2002']) recordSecret('upstream key', key);
for (const key of Object.values(CLIENT_KEYS)) recordSecret('client key', key);

/*
 * The patches below are made once per worker: with `isolate: false` (vitest.config.ts) this file
 * runs again before each test file in a worker that keeps its modules and globals, and a second
 * wrapper would record everything twice.
 */
const patched = Symbol.for('reservation-gateway.secret-scan.patched');
const patchedGlobals = globalThis as typeof globalThis & { [patched]?: true };
if (!patchedGlobals[patched]) {
  patchedGlobals[patched] = true;
  const issueToken = EmulatorState.prototype.issueToken;
  EmulatorState.prototype.issueToken = function (this: EmulatorState, licensee: string) {
    const token = issueToken.call(this, licensee);
    recordSecret('upstream token', token);
    return token;
  };

  /** Paths only a gateway serves (the emulator's are /api/… and /_emulator/…). */
  const GATEWAY_PATHS = new Set(['/graphql', '/health', '/ready']);
  const fetchOfNode = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const response = await fetchOfNode(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    if (GATEWAY_PATHS.has(new URL(url).pathname)) recordResponse(response);
    return response;
  };
}

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort, type Started, startCommand } from '../lib.ts';

/**
 * The systems compared side by side, each started against one emulator URL. Only `ours` is the
 * product; the peers live in bench/peers/<name>/ with their own package.json and lock file.
 */

export type SystemName = 'ours' | 'ours-cache-off' | 'naive' | 'mesh' | 'ceiling' | 'direct';

export const SYSTEM_LABELS: Record<SystemName, string> = {
  ours: 'ours',
  'ours-cache-off': 'ours, response cache off',
  naive: 'naive',
  mesh: 'Mesh',
  ceiling: 'ceiling',
  direct: 'direct REST',
};

export const PEERS_DIR = fileURLToPath(new URL('../peers/', import.meta.url));

/** Nothing run by the benchmark may contact anything but 127.0.0.1 (Apollo and Hive packages phone home otherwise). */
const QUIET = { APOLLO_TELEMETRY_DISABLED: 'true', METADATA_SERVER_DETECTION: 'none', LOG_LEVEL: 'warn' };

const READY = /ready at (http:\/\/127\.0\.0\.1:\d+)\/graphql/;

/**
 * Our gateway, configured as bench/gateway.ts does. The one place that says how it starts (the lead
 * switches it to the built dist/ here).
 */
/**
 * Ours as `npm start` runs it: dist/ (rebuilt first when stale), in the process that is measured;
 * as licensee 1001 unless `env` sets LICENSEES_FILE (whose licensees then bring their own keys).
 */
export function startOurs(env: Record<string, string>): Promise<Started> {
  const licensee: Record<string, string> = env.LICENSEES_FILE
    ? {}
    : { UPSTREAM_KEY: 'demo-key-1001', UPSTREAM_SYSTEM_IDENTIFIER: '1001' };
  return startCommand(['scripts/start.mjs'], {
    env: {
      PORT: '0',
      OPS_PORT: '0',
      ...licensee,
      ...QUIET,
      ...env,
    },
    pattern: READY,
  });
}

/** `npm ci` in a peer's folder when its node_modules is missing (the lock file is committed). */
export function installPeer(name: string): void {
  const dir = `${PEERS_DIR}${name}`;
  if (existsSync(`${dir}/node_modules`)) return;
  console.error(`installing bench/peers/${name} (npm ci)…`);
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
}

/** Composes the Mesh supergraph from docs/upstream.openapi.yaml (not committed: generated per run, ~2 s). */
export function composeMesh(): void {
  execFileSync(process.execPath, ['node_modules/@graphql-mesh/compose-cli/esm/bin.js', '-o', 'supergraph.graphql'], {
    cwd: `${PEERS_DIR}mesh`,
    env: { ...process.env, ...QUIET },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

export function startNaive(upstream: string): Promise<Started> {
  return startCommand(['server.js'], {
    cwd: `${PEERS_DIR}naive`,
    env: { PORT: '0', UPSTREAM_BASE_URL: upstream, ...QUIET },
    pattern: READY,
  });
}

export function startCeiling(): Promise<Started> {
  return startCommand(['server.js'], { cwd: `${PEERS_DIR}ceiling`, env: { PORT: '0', ...QUIET }, pattern: READY });
}

/** Hive Gateway in one process (`--fork 1`), on a port chosen here: it prints no URL at log level warn. */
export async function startMesh(upstream: string): Promise<Started> {
  const port = await freePort();
  const started = await startCommand(
    [
      'node_modules/@graphql-hive/gateway/dist/bin.js',
      'supergraph',
      'supergraph.graphql',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--fork',
      '1',
    ],
    {
      cwd: `${PEERS_DIR}mesh`,
      env: { UPSTREAM_BASE_URL: upstream, ...QUIET },
      waitFor: `http://127.0.0.1:${port}/healthcheck`,
    },
  );
  return started;
}

import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../node_modules/.bin/hive-gateway', import.meta.url));
const CONFIG = fileURLToPath(new URL('./gateway.config.ts', import.meta.url));

/** A port free on the loopback now (the CLI cannot be told port 0 and say which it took). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Hive Gateway (the `hive-gateway` CLI of @graphql-hive/gateway) serving a supergraph file on
 * 127.0.0.1, with gateway.config.ts beside this file (the Authorization header forwarded; demand
 * control and request signing only when asked).
 * Resolves once it answers; `close` stops the process.
 */
export async function startHiveGateway(
  supergraphSdl: string,
  options: {
    port?: number;
    log?: (line: string) => void;
    /** The reservations subgraph's subscriptions through router callbacks to this gateway (gateway.config.ts). */
    callbacks?: {
      heartbeatMs: number;
      /** The callback address the subgraph is given (default: this gateway's own /callback); its path is the one served. */
      publicUrl?: string;
    };
    /** Hive Gateway's demand control on, refusing operations estimated above this cost. */
    demandControlMaxCost?: number;
    /** Signs the requests to our subgraph with this secret (our ROUTER_HMAC_SECRET). */
    hmacSecret?: string;
    /** Hive Gateway's own response cache (gateway.config.ts, routerResponseCache): off by default. */
    responseCache?: boolean;
    /** Subscriptions to our subgraph over graphql-ws (gateway.config.ts, subscriptionsOverWebSocket): off by default. */
    subscriptionsOverWebSocket?: boolean;
  } = {},
) {
  const file = join(tmpdir(), `supergraph-${process.pid}-${Date.now()}.graphql`);
  writeFileSync(file, supergraphSdl);
  const port = options.port ?? (await freePort());
  const child = spawn(
    CLI,
    [
      'supergraph',
      file,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--config-path',
      CONFIG,
      '--disable-websockets',
    ],
    {
      env: {
        ...process.env,
        APOLLO_TELEMETRY_DISABLED: 'true',
        METADATA_SERVER_DETECTION: 'none',
        NODE_ENV: 'production',
        ...(options.callbacks
          ? {
              RESERVATIONS_CALLBACK_PUBLIC_URL: options.callbacks.publicUrl ?? `http://127.0.0.1:${port}/callback`,
              RESERVATIONS_CALLBACK_HEARTBEAT_MS: String(options.callbacks.heartbeatMs),
            }
          : {}),
        ...(options.demandControlMaxCost === undefined
          ? {}
          : { DEMAND_CONTROL_MAX_COST: String(options.demandControlMaxCost) }),
        ...(options.hmacSecret === undefined ? {} : { ROUTER_HMAC_SECRET: options.hmacSecret }),
        RESERVATIONS_ROUTER_RESPONSE_CACHE: options.responseCache ? 'on' : 'off',
        RESERVATIONS_SUBSCRIPTIONS_WS: options.subscriptionsOverWebSocket ? 'on' : 'off',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    options.log?.(chunk.toString());
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  // A CLI that cannot be run (not installed: ENOENT) emits 'error', which unheard would crash the process.
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}/graphql`;
  const deadline = Date.now() + 45_000;
  for (;;) {
    // Bounded: something else holding the port may accept and never answer.
    const ready = await fetch(`http://127.0.0.1:${port}/readiness`, { signal: AbortSignal.timeout(2_000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (spawnError || child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(file, { force: true });
      const reason = spawnError
        ? `${CLI} could not be run (${spawnError.message}); is @graphql-hive/gateway installed?`
        : `hive-gateway did not start:\n${output}`;
      throw new Error(reason);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    /** Where the subgraph's callbacks go, with `callbacks`. */
    callbackPrefix: `http://127.0.0.1:${port}/callback`,
    output: () => output,
    async close() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
      rmSync(file, { force: true });
    },
  };
}

import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { loadConfig } from '../../src/config/environment.ts';
import { type Emulator, type EmulatorOptions, startEmulator } from '../../src/emulator/server.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { type Listening, listen } from '../../src/http/listeners.ts';

export interface GraphQLAnswer<T> {
  status: number;
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
  /** With X-Show-Cost: 1, the cost and the response cache's outcome. */
  extensions?: Record<string, unknown>;
}

export interface TestGateway {
  emulator: Emulator;
  gateway: Gateway;
  /** `headers` are added to (or replace) the JSON request's own, e.g. a client's credential. */
  exec<T, V>(
    document: TypedDocumentNode<T, V> | string,
    variables?: V,
    headers?: Record<string, string>,
  ): Promise<GraphQLAnswer<T>>;
  /** Upstream calls logged since the last `clearLog`, authenticate left out unless asked. */
  calls(options?: { withAuthenticate?: boolean }): { endpoint: string; params: Record<string, unknown> }[];
  count(endpoint: string): number;
  clearLog(): void;
  close(): Promise<void>;
}

/**
 * An emulator on 127.0.0.1:0 and a gateway over it, talked to through yoga.fetch (no socket). With
 * `shared`, the gateway uses that emulator instead (several gateways over one), and leaves it open;
 * `gateway` passes options to createGateway.
 */
export async function startGateway(
  emulatorOptions: EmulatorOptions = { rateLimit: false },
  env: Record<string, string> = {},
  options: { shared?: Emulator; gateway?: Parameters<typeof createGateway>[2] } = {},
): Promise<TestGateway> {
  const { shared } = options;
  const emulator = shared ?? (await startEmulator({ port: 0, ...emulatorOptions }));
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
  const gateway = createGateway({ ...config, upstreamBaseUrl: emulator.url }, undefined, options.gateway);
  const t: TestGateway = {
    emulator,
    gateway,
    async exec(document, variables, headers = {}) {
      const res = await gateway.yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
        body: JSON.stringify({ query: typeof document === 'string' ? document : print(document), variables }),
      });
      return { status: res.status, ...((await res.json()) as object) };
    },
    calls: (options = {}) =>
      emulator.state.log
        .filter((r) => options.withAuthenticate || r.endpoint !== 'authenticate')
        .map((r) => ({ endpoint: r.endpoint, params: r.params })),
    count: (endpoint) => emulator.state.log.filter((r) => r.endpoint === endpoint).length,
    clearLog: () => {
      emulator.state.log = [];
    },
    async close() {
      await gateway.close();
      if (!shared) await emulator.close();
    },
  };
  return t;
}

/**
 * A warm token, empty caches (upstream and response) and an empty log: where call-counting tests
 * start from. The pages an earlier operation reads ahead (after its answer) land first, not in the log.
 */
export async function readyToCount(t: TestGateway): Promise<void> {
  await readAheadsSettled(t);
  await t.gateway.upstream.tokens.get({ systemIdentifier: '1001', key: 'demo-key-1001', timeZone: 'UTC' });
  await t.gateway.upstream.clearCache();
  t.gateway.clearResponseCache();
  t.clearLog();
}

/** Waits until the read-aheads an operation started after its answer have ended (connections/window.ts starts them a turn later). */
export async function readAheadsSettled(t: TestGateway): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
  await t.gateway.upstream.readAheadsSettled();
}

/**
 * The test gateway on real sockets as main.ts serves it: the clients' listener and the operators'
 * one (OPS_PORT), both on 127.0.0.1 port 0; `url` and `opsUrl` say where.
 */
export function serve(t: TestGateway): Promise<Listening> {
  const { gateway } = t;
  return listen(
    { clients: gateway.yoga, operators: gateway.operators, acceptWebSockets: gateway.acceptWebSockets },
    { port: 0, host: '127.0.0.1', opsPort: 0, opsHost: '127.0.0.1', http: loadConfig({}).http },
  );
}

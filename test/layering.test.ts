import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The layering docs/architecture.md describes, checked on the imports themselves: each rule names
 * a folder of src/ and what it must not import (another folder of src/, or a package).
 */
const SRC = new URL('../src/', import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Each import of a file: a package name, or a path inside src/ (`upstream/client.ts`). */
function imports(path: string): string[] {
  const specifiers = [
    ...readFileSync(path, 'utf8').matchAll(
      /^(?:import|export)[^'";]*?from\s*['"]([^'"]+)['"]|^import\s*['"]([^'"]+)['"]/gm,
    ),
  ].map((m) => (m[1] ?? m[2])!);
  return specifiers.map((specifier) =>
    specifier.startsWith('.') ? relative(SRC, resolve(dirname(path), specifier)) : specifier,
  );
}

/** `file → import` for every import of `folder`'s files that matches `forbidden`. */
function offending(folder: string, forbidden: RegExp): string[] {
  return files(join(SRC, folder)).flatMap((file) =>
    imports(file)
      .filter((i) => forbidden.test(i))
      .map((i) => `${relative(SRC, file)} → ${i}`),
  );
}

const GRAPHQL = /^(graphql|graphql-yoga|graphql-ws|@graphql-yoga\/|@envelop\/|@pothos\/|@apollo\/)/;
const NETWORK = /^(undici|ioredis|ws|node:(http|https|net|tls))$/;
/** What lies behind the upstream client: the call path's layers, its stores, transport, budget and tokens. */
const UPSTREAM_INTERNALS = /^upstream\/(layers|stores)\/|^upstream\/(transport|budget|tokens|classify|call)\.ts$/;
const gatewayFolder = (...folders: string[]) => new RegExp(`^(${folders.join('|')})(/|\\.ts$)`);

describe('layers', () => {
  it('the emulator imports nothing of the gateway (an independent implementation of the specification)', () => {
    const outside = files(join(SRC, 'emulator')).flatMap((file) =>
      imports(file)
        .filter((i) => !i.startsWith('emulator/') && /\.ts$/.test(i))
        .map((i) => `${relative(SRC, file)} → ${i}`),
    );
    expect(outside).toEqual([]);
  });

  it('the upstream layer knows nothing of GraphQL, of requests or of the gateway above it', () => {
    expect(offending('upstream', GRAPHQL)).toEqual([]);
    expect(
      offending(
        'upstream',
        gatewayFolder(
          'schema',
          'resolvers',
          'connections',
          'operations',
          'http',
          'auth',
          'changes',
          'config',
          'observability',
          'gateway',
          'main',
        ),
      ),
    ).toEqual([]);
  });

  it('the schema never calls the network: it reaches the service only through resolvers', () => {
    expect(offending('schema', NETWORK)).toEqual([]);
    expect(offending('schema', /^upstream\/(client|transport)\.ts$|^upstream\/(layers|stores)\//)).toEqual([]);
    expect(offending('schema', gatewayFolder('http', 'operations', 'gateway', 'main'))).toEqual([]);
  });

  it('resolvers and connections import no GraphQL and build no URL', () => {
    expect(offending('resolvers', GRAPHQL)).toEqual([]);
    expect(offending('resolvers', gatewayFolder('schema', 'http', 'operations'))).toEqual([]);
    expect(offending('connections', GRAPHQL)).toEqual([]);
    expect(offending('connections', gatewayFolder('schema', 'resolvers', 'http', 'operations'))).toEqual([]);
  });

  it('the HTTP door knows nothing of the upstream client’s internals', () => {
    expect(offending('http', UPSTREAM_INTERNALS)).toEqual([]);
  });

  it('Redis helpers and change feeds know nothing of GraphQL or HTTP', () => {
    expect(offending('redis', /.*/).filter((line) => !/→ (redis\/|ioredis|node:)/.test(line))).toEqual([]);
    expect(offending('changes', GRAPHQL)).toEqual([]);
    expect(offending('changes', gatewayFolder('schema', 'http', 'operations', 'gateway'))).toEqual([]);
  });

  it('only the upstream transport and the one outbound path (router callbacks) import undici', () => {
    const undici = [
      'schema',
      'resolvers',
      'connections',
      'upstream',
      'http',
      'operations',
      'changes',
      'deliveries',
    ].flatMap((folder) => offending(folder, /^undici$/));
    expect(undici).toEqual(['upstream/transport.ts → undici', 'deliveries/outbound.ts → undici']);
  });

  it('sees the imports it checks (a rule over files it cannot read would pass on nothing)', () => {
    expect(imports(join(SRC, 'gateway.ts'))).toEqual(
      expect.arrayContaining(['graphql-yoga', 'upstream/client.ts', 'http/websocket.ts']),
    );
    expect(offending('http', /^upstream\//).length).toBeGreaterThan(0);
  });
});

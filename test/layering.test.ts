import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
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

/**
 * Each import of a file that is a file of src/, static or dynamic (`await import('./x.ts')`,
 * `typeof import('./x.ts')`): the edges of the import graph the cycle check walks.
 */
function dependencies(path: string): string[] {
  const dynamic = [...readFileSync(path, 'utf8').matchAll(/\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g)].map((m) =>
    relative(SRC, resolve(dirname(path), m[1]!)),
  );
  return [...new Set([...imports(path), ...dynamic])].filter((i) => i.endsWith('.ts') && existsSync(join(SRC, i)));
}

/**
 * Every import cycle among the files of src/, each as `a.ts → b.ts → a.ts`: for each import that
 * lies on a cycle, the shortest cycle through it (so every such import is shown at least once).
 */
function importCycles(): string[] {
  const graph = new Map(files(SRC).map((file) => [relative(SRC, file), dependencies(file)]));
  // Strongly connected components (Tarjan): an import lies on a cycle iff both ends share one.
  const component = new Map<string, number>();
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  let count = 0;
  const visit = (file: string) => {
    order.set(file, count);
    low.set(file, count++);
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!order.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (!component.has(next)) low.set(file, Math.min(low.get(file)!, order.get(next)!));
    }
    if (low.get(file) === order.get(file)) {
      let member: string;
      do {
        member = stack.pop()!;
        component.set(member, order.get(file)!);
      } while (member !== file);
    }
  };
  for (const file of graph.keys()) if (!order.has(file)) visit(file);
  /** The shortest path from `from` to `to` inside their component (breadth first). */
  const path = (from: string, to: string): string[] => {
    const previous = new Map<string, string>([[from, from]]);
    const queue = [from];
    while (queue.length > 0) {
      const file = queue.shift()!;
      if (file === to) break;
      for (const next of graph.get(file) ?? [])
        if (component.get(next) === component.get(from) && !previous.has(next)) {
          previous.set(next, file);
          queue.push(next);
        }
    }
    const steps = [to];
    while (steps[0] !== from) steps.unshift(previous.get(steps[0]!)!);
    return steps;
  };
  const cycles = new Set<string>();
  for (const [file, nexts] of graph)
    for (const next of nexts) {
      if (component.get(next) !== component.get(file)) continue;
      const cycle = next === file ? [file] : [file, ...path(next, file).slice(0, -1)];
      // The same cycle found from another of its imports is written from its smallest file.
      const start = cycle.indexOf([...cycle].sort()[0]!);
      const rotated = [...cycle.slice(start), ...cycle.slice(0, start)];
      cycles.add([...rotated, rotated[0]].join(' → '));
    }
  return [...cycles].sort();
}

/**
 * The stages of the gateway, in the order docs/architecture.md's folder map gives (the order a
 * request meets them), except that config comes first: every stage is handed its settings, and
 * config reads none of theirs. `main` and `gateway` are the process and the composition root; the
 * leaf files `package-info.ts` (the package's name and version) and `error-codes.ts` (the codes
 * clients read) import nothing and belong to no stage. The emulator stands apart (its own rule).
 */
const STAGES = [
  'config',
  'main',
  'gateway',
  'http',
  'auth',
  'operations',
  'observability',
  'schema',
  'resolvers',
  'connections',
  'deliveries',
  'webhooks',
  'changes',
  'ids',
  'upstream',
  'redis',
];
const LEAVES = ['package-info.ts', 'error-codes.ts'];

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
          'ids',
          'webhooks',
          'deliveries',
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

  it('config imports no later stage: every stage is handed its settings, and config reads none of theirs', () => {
    const folders = readdirSync(SRC).filter((name) => statSync(join(SRC, name)).isDirectory());
    const topFiles = readdirSync(SRC).filter((name) => name.endsWith('.ts') && !LEAVES.includes(name));
    // Every folder and file of src/ has its stage, so a new one cannot slip past the rule.
    expect(
      [...folders, ...topFiles.map((name) => name.replace(/\.ts$/, ''))].filter(
        (name) => name !== 'emulator' && !STAGES.includes(name),
      ),
    ).toEqual([]);
    const later = gatewayFolder(...STAGES.filter((stage) => stage !== 'config'));
    expect(offending('config', later)).toEqual([]);
    expect(offending('config', /\.ts$/).filter((line) => !/→ (config\/|package-info\.ts$)/.test(line))).toEqual([]);
    for (const leaf of LEAVES) expect(imports(join(SRC, leaf)).filter((i) => i.endsWith('.ts'))).toEqual([]);
  });

  it('the change feeds import nothing of the resolvers: the upstream records both read are in upstream/records.ts', () => {
    // The resolvers may import the feeds (the subscription joins one), never the other way round.
    expect(
      offending('changes', gatewayFolder('resolvers', 'schema', 'webhooks', 'deliveries', 'http', 'auth')),
    ).toEqual([]);
    expect(imports(join(SRC, 'upstream/records.ts')).filter((i) => !/^upstream\//.test(i))).toEqual([]);
    expect(offending('changes', /^upstream\/records\.ts$/).length).toBeGreaterThan(0);
  });

  it('global ids live below both the schema and the webhooks, which import each other for none', () => {
    expect(
      offending('webhooks', gatewayFolder('schema', 'resolvers', 'http', 'operations', 'gateway', 'main')),
    ).toEqual([]);
    expect(offending('ids', GRAPHQL)).toEqual([]);
    expect(
      offending('ids', gatewayFolder(...STAGES.filter((stage) => stage !== 'ids' && stage !== 'upstream'))),
    ).toEqual([]);
    expect(imports(join(SRC, 'webhooks/message.ts'))).toContain('ids/global-id.ts');
    expect(imports(join(SRC, 'schema/builder.ts'))).toContain('ids/global-id.ts');
  });

  it('the operation record is the operations’ own: observability reads it, and operations import no observability', () => {
    expect(offending('operations', gatewayFolder('observability'))).toEqual([]);
    expect(existsSync(join(SRC, 'operations/operation-record.ts'))).toBe(true);
    expect(offending('observability', /^operations\/operation-record\.ts$/).length).toBeGreaterThan(0);
  });

  it('no import cycle among the files of src/, type imports and re-exports included', () => {
    expect(importCycles()).toEqual([]);
  });

  it('sees the imports it checks (a rule over files it cannot read would pass on nothing)', () => {
    expect(imports(join(SRC, 'gateway.ts'))).toEqual(
      expect.arrayContaining(['graphql-yoga', 'upstream/client.ts', 'http/websocket.ts']),
    );
    expect(offending('http', /^upstream\//).length).toBeGreaterThan(0);
  });
});

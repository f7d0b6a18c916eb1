import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The layering the README describes (schema → resolvers → upstream; the emulator apart), checked on the imports themselves. */
const SRC = new URL('../src/', import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

function imports(path: string): string[] {
  return [...readFileSync(path, 'utf8').matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]!);
}

const layer = (dir: string) => files(join(SRC, dir)).map((f) => ({ file: f.slice(SRC.length), imports: imports(f) }));

describe('layers', () => {
  it('the emulator imports nothing of the gateway (an independent implementation of the specification)', () => {
    const offending = layer('emulator').flatMap(({ file, imports }) => imports.filter((i) => /\.\.\/(\.\.\/)?(upstream|resolvers|schema|server|config)/.test(i)).map((i) => `${file} → ${i}`));
    expect(offending).toEqual([]);
  });

  it('the upstream layer knows nothing of GraphQL', () => {
    const offending = layer('upstream').flatMap(({ file, imports }) => imports.filter((i) => /graphql|pothos|\.\.\/(resolvers|schema)/.test(i)).map((i) => `${file} → ${i}`));
    expect(offending).toEqual([]);
  });

  it('resolvers import no GraphQL and build no URL; only the upstream transport imports undici', () => {
    const resolvers = layer('resolvers').flatMap(({ file, imports }) => imports.filter((i) => /graphql|pothos|undici|\.\.\/schema/.test(i)).map((i) => `${file} → ${i}`));
    expect(resolvers).toEqual([]);
    const undici = [...layer('schema'), ...layer('resolvers'), ...layer('upstream')].filter(({ imports }) => imports.includes('undici')).map(({ file }) => file);
    expect(undici).toEqual(['upstream/transport.ts']);
  });
});

import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { browserOrSkip, findChromium } from './helpers/browser.ts';
import { START_FIRST } from './sequencer.ts';

/**
 * The newcomer's first run: `npm install && npm test` on a clone of this repository alone. Guards the
 * faults where a test read ../shared and the browser test insisted on /usr/bin/chromium, and where
 * the README sent readers to documents a clone does not have.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));

function files(dir: string, ending: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) return [];
    return statSync(path).isDirectory() ? files(path, ending) : ending.test(name) ? [path] : [];
  });
}

const inside = (path: string) => !relative(ROOT, path).startsWith('..');

describe('a clone of this repository alone', () => {
  it('has no test that reads a file outside the repository', () => {
    const outside: string[] = [];
    for (const file of files(join(ROOT, 'test'), /\.ts$/)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/new URL\('([^']+)', import\.meta\.url\)/g)) {
        const target = resolve(join(file, '..'), m[1]!);
        if (!inside(target)) outside.push(`${relative(ROOT, file)}: ${m[1]}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('starts first (test/sequencer.ts) only test files that exist', () => {
    const tests = files(join(ROOT, 'test'), /\.test\.ts$/).map((file) => relative(ROOT, file));
    expect(START_FIRST.filter((file) => !tests.includes(file))).toEqual([]);
  });

  it('has a README whose every link points at a file inside the repository that exists', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const broken: string[] = [];
    for (const m of readme.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
      const target = m[1]!;
      if (/^[a-z]+:/i.test(target)) continue;
      const path = resolve(ROOT, target);
      if (!inside(path) || !existsSync(path)) broken.push(target);
    }
    // Paths written as code count too: `../shared/…` is not in a user's clone. The documents the
    // README sends readers to are held to it as well (test/docs-links.test.ts checks their links).
    const docs = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));
    for (const text of [readme, ...docs.map((name) => readFileSync(join(ROOT, 'docs', name), 'utf8'))])
      for (const m of text.matchAll(/`(\.\.\/[^`]+)`/g)) broken.push(m[1]!);
    expect(broken).toEqual([]);
  });
});

/** Every folder under src/, as `src/a/b`. */
function sourceFolders(dir = join(ROOT, 'src')): string[] {
  const here = relative(ROOT, dir).split('\\').join('/');
  const below = readdirSync(dir).filter((name) => statSync(join(dir, name)).isDirectory());
  return [here, ...below.flatMap((name) => sourceFolders(join(dir, name)))];
}

/** Whether `text` names the folder itself (`src/upstream` or `src/upstream/`), not only a path below it. */
function namesFolder(text: string, folder: string): boolean {
  const escaped = folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(?<![\\w./-])${escaped}(?:/(?![\\w.-])|(?![\\w./-]))`).test(text);
}

describe('the map of the code', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const architecture = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const folders = sourceFolders();

  it('finds the folders it checks, nested ones included', () => {
    expect(folders).toEqual(
      expect.arrayContaining(['src', 'src/upstream', 'src/upstream/layers', 'src/emulator/handlers']),
    );
    expect(namesFolder('see `src/upstream/layers/`', 'src/upstream')).toBe(false);
    expect(namesFolder('see `src/upstream/client.ts`', 'src/upstream')).toBe(false);
    expect(namesFolder('see `src/upstream/`, then', 'src/upstream')).toBe(true);
    expect(namesFolder('| `src/upstream` |', 'src/upstream')).toBe(true);
  });

  it('docs/architecture.md names every folder of src/', () => {
    expect(folders.filter((folder) => !namesFolder(architecture, folder))).toEqual([]);
  });

  it('the README names every folder of src/ and links docs/architecture.md', () => {
    expect(folders.filter((folder) => !namesFolder(readme, folder))).toEqual([]);
    expect(readme).toContain('](docs/architecture.md)');
  });

  it('docs/settings.md documents every environment variable the settings accept', () => {
    // The keys of the zod schema in config/environment.ts, one per line as `NAME: …`.
    const source = readFileSync(join(ROOT, 'src/config/environment.ts'), 'utf8');
    const settings = readFileSync(join(ROOT, 'docs/settings.md'), 'utf8');
    const accepted = [...source.matchAll(/^\s+([A-Z][A-Z0-9_]+): /gm)].map((m) => m[1]!);
    expect(accepted.length).toBeGreaterThan(30);
    expect(accepted.filter((name) => !settings.includes(`\`${name}\``))).toEqual([]);
  });
});

describe('finding a browser for the browser tests', () => {
  const fakeBrowserDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'browser-'));
    const path = join(dir, 'chromium-browser');
    writeFileSync(path, '#!/bin/sh\n');
    chmodSync(path, 0o755);
    return { dir, path };
  };

  it('takes CHROMIUM_PATH first, then the usual names on PATH', () => {
    const { dir, path } = fakeBrowserDir();
    expect(findChromium({ PATH: `/nonexistent:${dir}` })).toBe(path);
    expect(findChromium({ PATH: dir, CHROMIUM_PATH: '/nonexistent/chrome' })).toBeUndefined();
    expect(findChromium({ PATH: '/nonexistent', CHROMIUM_PATH: path })).toBe(path);
  });

  it('skips with an install hint when there is none, and fails instead under REQUIRE_BROWSER=1', () => {
    expect(browserOrSkip({ PATH: '/nonexistent' })).toBeUndefined();
    expect(() => browserOrSkip({ PATH: '/nonexistent', REQUIRE_BROWSER: '1' })).toThrow(/apt-get install chromium/);
  });
});

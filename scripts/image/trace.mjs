// The image's runtime tree: the files that `node dist/main.js`, the emulator (dist/emulator/main.js)
// and `npm start` (scripts/start.mjs) can load, traced from a built tree by @vercel/nft (the tracer
// Next.js' standalone output uses), copied with their paths into an empty folder. The Dockerfile's
// build stage runs it over its own tree, so the runtime stage holds no dev dependency, no second
// install and no npm log, and only the module files Node reads: no other module format's copy, no
// types, maps, tests or manuals.
//
// Usage: node scripts/image/trace.mjs <built tree> <empty output folder>
//
// Two rules narrow the trace below what nft keeps by default, both by how Node itself resolves:
// - exportsOnly: a package with "exports" is read through them only (Node ignores its "main").
// - GraphiQL's page (@graphql-yoga/render-graphiql) is reached only by import() from ES modules
//   (src/http/graphiql.ts), so its CommonJS copy (9 MB) is never read.
// One rule widens it: nft resolves every `require` of an ES module as an import, also one made by
// createRequire (src/observability/tracing.ts loads OpenTelemetry as CommonJS that way), so in our
// own files that create a require, each specifier is resolved both ways.
// And what the built tree has only for development: `npm start` compiles (scripts/build.mjs, with
// TypeScript) only where src/ is newer than dist/, and the image has no src/; source maps.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { nodeFileTrace, resolve as resolveDependency } from '@vercel/nft';

const ENTRIES = ['dist/main.js', 'dist/emulator/main.js'];
/**
 * Read by `npm start` and by people. The lock file stays out: nothing installs in the image, and
 * scanners read each package's own package.json under node_modules. `npm start` (scripts/start.mjs)
 * loads its staleness check and dist/main.js, an entry already; traced itself, its `dist` folder
 * (where it looks for the build's stamp) would bring every file of dist/, the modules dist/main.js
 * holds bundled (scripts/build.mjs) and the packages they import; it also loads dist/config/heap.js.
 */
const ALSO = [
  'package.json',
  'scripts/start.mjs',
  'scripts/staleness.mjs',
  'dist/.build-stamp.json',
  // What `npm start` asks how to size V8's heap (src/config/heap.ts): not in the bundle.
  'dist/config/heap.js',
];
/** Each traced package's licence and notice files: the licences of what the image distributes. */
const LICENSE = /^(licen[cs]e|notice|copying)(\.\w+)?$/i;
const NEVER_READ = [
  'node_modules/@graphql-yoga/render-graphiql/cjs/**',
  'scripts/build.mjs',
  'src/**',
  'tsconfig*.json',
  '**/*.map',
];

const [tree, out] = process.argv.slice(2).map((path) => resolve(path));
if (!tree || !out) {
  console.error('usage: node scripts/image/trace.mjs <built tree> <empty output folder>');
  process.exit(2);
}
for (const entry of [...ENTRIES, ...ALSO]) {
  if (!existsSync(join(tree, entry))) {
    console.error(`trace: ${join(tree, entry)} is missing: run \`npm run build\` there first`);
    process.exit(1);
  }
}
if (existsSync(out) && readdirSync(out).length > 0) {
  console.error(`trace: ${out} is not empty`);
  process.exit(1);
}

/**
 * What our modules load on use with a require they create (src/observability/tracing.ts loads
 * OpenTelemetry that way): found in the transpiled modules of dist/, where each reads
 * `require('<package>')`. The bundle dist/main.js holds the same code with the require renamed,
 * which nft does not follow, so each is traced as an entry of its own, resolved as CommonJS.
 */
function requiredOnUse() {
  const found = new Set();
  for (const entry of readdirSync(join(tree, 'dist'), { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const text = readFileSync(join(entry.parentPath, entry.name), 'utf8');
    if (!text.includes('= createRequire(import.meta.url)')) continue;
    for (const m of text.matchAll(/\brequire\('([^'.][^']*)'\)/g)) found.add(m[1]);
  }
  const require = createRequire(join(tree, 'dist', 'main.js'));
  return [...found].map((specifier) => require.resolve(specifier));
}

/** The package.json of the package `file` belongs to: Node reads it to resolve the package's name. */
function manifestOf(file) {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    if (basename(dirname(dir)) === 'node_modules' || basename(dirname(dirname(dir))) === 'node_modules')
      if (existsSync(join(dir, 'package.json')) && JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name)
        return relative(tree, join(dir, 'package.json'));
  }
  throw new Error(`trace: no package.json above ${file}`);
}
const onUse = requiredOnUse();

const requiring = new Map();
/** Whether `file` is one of ours (dist/) that makes a require with createRequire. */
const createsRequire = (file) => {
  if (!requiring.has(file)) {
    requiring.set(file, file.startsWith(join(tree, 'dist')) && readFileSync(file, 'utf8').includes('createRequire('));
  }
  return requiring.get(file);
};
const { fileList, warnings } = await nodeFileTrace([...ENTRIES.map((entry) => join(tree, entry)), ...onUse], {
  base: tree,
  processCwd: tree,
  exportsOnly: true,
  ignore: NEVER_READ,
  resolve: async (id, parent, job, cjsResolve) => {
    if (cjsResolve || !createsRequire(parent)) return resolveDependency(id, parent, job, cjsResolve);
    const both = await Promise.all([true, false].map((cjs) => resolveDependency(id, parent, job, cjs)));
    return [...new Set(both.flat())];
  },
});
// What nft could not resolve: optional peers a package tries and does without (ws' bufferutil,
// @whatwg-node/fetch's node-libcurl) and a computed path it cannot follow (i18n-iso-countries'
// locales, of which src/upstream/formats.ts loads English by name). Printed, not fatal: the image
// test runs the image.
for (const warning of warnings) console.error(`trace: ${String(warning.message ?? warning).split('\n')[0]}`);

/**
 * The packages the bundle holds copies of (dist/main.js and its chunks), read from their source
 * maps: nft never sees them, but the image distributes their code, so it carries their package.json
 * and licence as it does for a package it traced.
 */
function bundledManifests() {
  const dist = join(tree, 'dist');
  const found = new Set();
  for (const name of readdirSync(dist).filter((file) => file.endsWith('.js.map'))) {
    for (const source of JSON.parse(readFileSync(join(dist, name), 'utf8')).sources ?? []) {
      const at = source.lastIndexOf('node_modules/');
      if (at < 0) continue;
      const [scope, name2] = source.slice(at + 'node_modules/'.length).split('/');
      const dir = relative(
        tree,
        join(dist, source.slice(0, at), 'node_modules', scope.startsWith('@') ? join(scope, name2) : scope),
      );
      if (existsSync(join(tree, dir, 'package.json'))) found.add(join(dir, 'package.json'));
    }
  }
  return [...found];
}

const onUseManifests = [...onUse.map(manifestOf), ...bundledManifests()];
const packages = [...fileList, ...onUseManifests].filter((path) =>
  /(^|\/)node_modules\/(@[^/]+\/)?[^/]+\/package\.json$/.test(path),
);
const licenses = packages.flatMap((manifest) => {
  const dir = dirname(manifest);
  return readdirSync(join(tree, dir))
    .filter((name) => LICENSE.test(name))
    .map((name) => join(dir, name));
});

let bytes = 0;
let files = 0;
for (const path of new Set([...fileList, ...onUseManifests, ...ALSO, ...licenses])) {
  const from = join(tree, path);
  const stat = statSync(from);
  if (!stat.isFile()) continue;
  mkdirSync(dirname(join(out, path)), { recursive: true });
  copyFileSync(from, join(out, path));
  bytes += stat.size;
  files += 1;
}
console.error(`trace: ${files} files, ${(bytes / 1e6).toFixed(1)} MB into ${out}`);

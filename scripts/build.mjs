import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import ts from 'typescript';
import { newestSourceMtime, STAMP_FILE } from './staleness.mjs';

/**
 * `npm run build`: src/ → dist/ (or --out-dir), with the options of tsconfig.build.json.
 *
 * Each file is transpiled on its own (`isolatedModules` in tsconfig.json guarantees that this emits
 * what a whole-program tsc would), which takes a second or two where `tsc` takes ten or more on
 * this machine: `npm start` rebuilds a stale dist/ without a long wait. Types are checked by
 * `npm run typecheck`, as they were when the sources ran through tsx. Files that are not
 * TypeScript (the GraphiQL example query) are copied beside the code that reads them.
 *
 * Then the gateway's entry is bundled: dist/main.js is replaced by one module holding it and every
 * module it imports (ours and the packages'), without comments or blank space, and the modules it
 * imports only on use (Redis, the emulator, graphql-jit) as chunks beside it. A process that
 * loads some 1,600 files keeps each one's source text in its heap; the bundle's is a fraction of
 * theirs, and packages' modules that nothing imports are left out: 77 MiB of RSS at ready instead of
 * 98–102 (docs/decisions/0001-bundle.md). Identifiers are not minified, so stack traces keep their function
 * names; where two modules' top-level names clash, esbuild suffixes one (cockatiel's
 * `BrokenCircuitError2`, prom-client's `Counter3`), which a logged error's `type` then shows.
 * esbuild's `keepNames` would restore those few and cost 7 MiB of RSS at ready (84 against 77).
 * dist/main.js.map maps positions back to src/. The rest of dist/ stays as transpiled (the
 * emulator's entry runs from it).
 * Resources the bundled code reads beside itself are copied next to the bundle too.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { 'out-dir': { type: 'string' } } });

const config = ts.getParsedCommandLineOfConfigFile(
  join(root, 'tsconfig.build.json'),
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail(d) },
);
if (!config) process.exit(1);
if (config.errors.length > 0) fail(config.errors[0]);
const sourceDir = config.options.rootDir ?? join(root, 'src');
const outDir = values['out-dir'] ? resolve(values['out-dir']) : (config.options.outDir ?? join(root, 'dist'));
// transpileModule cannot read package.json's "type": under NodeNext it would emit CommonJS.
// The package is ESM, so the output is ESNext modules, as NodeNext emits for it.
const compilerOptions = {
  ...config.options,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  outDir,
  rootDir: sourceDir,
};

const started = performance.now();
// Measured before the build, so that a source saved while it runs makes the result stale.
const newestSourceMs = newestSourceMtime(root);
rmSync(outDir, { recursive: true, force: true });
let files = 0;
const resources = [];
for (const source of walk(sourceDir)) {
  const target = join(outDir, relative(sourceDir, source));
  mkdirSync(dirname(target), { recursive: true });
  if (!source.endsWith('.ts')) {
    copyFileSync(source, target);
    resources.push(target);
    continue;
  }
  const text = ts.sys.readFile(source) ?? '';
  const output = ts.transpileModule(text, { compilerOptions, fileName: source, reportDiagnostics: true });
  if (output.diagnostics?.length) fail(output.diagnostics[0]);
  const js = target.replace(/\.ts$/, '.js');
  writeFileSync(js, output.outputText);
  if (output.sourceMapText) writeFileSync(`${js}.map`, output.sourceMapText);
  files++;
}
await bundleEntry(join(outDir, 'main.js'), resources);
// Last: a build that failed half-way leaves no stamp, so the next start builds again.
writeFileSync(join(outDir, STAMP_FILE), JSON.stringify({ newestSourceMs }));
console.log(
  `built ${files} files into ${relative(root, outDir) || '.'} in ${Math.round(performance.now() - started)} ms`,
);

/**
 * Replaces `entry` by its bundle, chunks beside it (see the comment at the top). Three packages
 * stay packages of their own, imported from node_modules as before:
 * - `graphql`: OpenTelemetry's GraphQL plugin, loaded on use with `require`, must meet the same
 *   copy of it as the schema (graphql-js checks that a schema's types come from its own copy), and
 *   the bundled CommonJS packages (federation's) then `require` that same copy too;
 * - `undici`, CommonJS loaded on first use with `import()`: a bundled chunk of CommonJS offers only
 *   its `default` to `import()`, where Node offers its named exports too (`Pool` was undefined);
 * - `@graphql-yoga/render-graphiql`, loaded with the first GraphiQL page: 9 MB of GraphiQL's own
 *   bundle that would only be copied into ours.
 * The source map points into src/ and node_modules without carrying their text (the image has
 * neither src/ nor every package's sources, and the text would triple its size).
 */
async function bundleEntry(entry, resources) {
  const dir = dirname(entry);
  await build({
    entryPoints: [entry],
    outdir: dir,
    allowOverwrite: true,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    chunkNames: 'chunk-[hash]',
    external: ['graphql', 'undici', '@graphql-yoga/render-graphiql'],
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'external',
    sourcemap: true,
    sourcesContent: false,
    logLevel: 'error',
    // Packages bundled from CommonJS `require` Node's built-ins: ESM has no `require` of its own.
    banner: {
      js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
    },
  });
  // A resource is read beside the module that reads it (`new URL('./page.html', import.meta.url)`):
  // in the bundle that is its directory.
  const beside = new Map();
  for (const resource of resources) {
    const name = relative(outDir, resource).split('/').pop();
    if (beside.has(name)) fail({ messageText: `two resources named ${name}: ${beside.get(name)} and ${resource}` });
    beside.set(name, resource);
    if (dirname(resource) !== dir) copyFileSync(resource, join(dir, name));
  }
}

function* walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else yield path;
  }
}

function fail(diagnostic) {
  console.error(
    `build failed: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}${diagnostic.file ? ` (${diagnostic.file.fileName})` : ''}`,
  );
  process.exit(1);
}

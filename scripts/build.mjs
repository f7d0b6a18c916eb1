import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
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
for (const source of walk(sourceDir)) {
  const target = join(outDir, relative(sourceDir, source));
  mkdirSync(dirname(target), { recursive: true });
  if (!source.endsWith('.ts')) {
    copyFileSync(source, target);
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
// Last: a build that failed half-way leaves no stamp, so the next start builds again.
writeFileSync(join(outDir, STAMP_FILE), JSON.stringify({ newestSourceMs }));
console.log(
  `built ${files} files into ${relative(root, outDir) || '.'} in ${Math.round(performance.now() - started)} ms`,
);

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

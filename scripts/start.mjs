import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { isStale, newestSourceMtime, readStamp } from './staleness.mjs';

/**
 * `npm start`: builds dist/ first when it is missing or older than the sources, then runs the
 * compiled gateway in this process (no tsx, no TypeScript loaded: they cost start time and memory).
 */
// The young generation held small from the first allocation: src/config/young-generation.ts says why.
setFlagsFromString('--semi-space-growth-factor=1');

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = fileURLToPath(new URL('../dist', import.meta.url));

if (isStale(newestSourceMtime(root), readStamp(outDir))) {
  // A child process: the compiler's memory is returned before the gateway starts.
  const build = spawnSync(process.execPath, [fileURLToPath(new URL('./build.mjs', import.meta.url))], {
    stdio: 'inherit',
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
// Under a container's memory limit Node starts again, as this same process (process.execve, Node
// 22.15 on), with V8's heap sized as the image's command sizes it (src/config/heap.ts): V8's own
// sizing there costs several times the CPU per large answer. Nothing changes without a limit, or
// when a heap size was given (on the command line or in NODE_OPTIONS).
const { memoryLimit, startFlags } = await import('../dist/config/heap.js');
const heapFlags = startFlags({
  execArgv: process.execArgv,
  nodeOptions: process.env.NODE_OPTIONS,
  limit: memoryLimit(),
  knowsPercentage: process.allowedNodeEnvironmentFlags.has('--max-old-space-size-percentage'),
});
if (heapFlags && typeof process.execve === 'function' && process.platform !== 'win32') {
  process.execve(process.execPath, [process.execPath, ...process.execArgv, ...heapFlags, ...process.argv.slice(1)]);
}
await import('../dist/main.js');

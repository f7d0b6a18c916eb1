/** `npm run bench -- <name> [--flag …]`: runs bench/<name>.ts (flags are the benchmark's to read); without a name, lists them. */
import { readdirSync } from 'node:fs';

const names = readdirSync(new URL('.', import.meta.url))
  .filter((f) => f.endsWith('.ts') && !['run.ts', 'lib.ts'].includes(f))
  .map((f) => f.slice(0, -3));
const args = process.argv.slice(2);
const firstFlag = args.findIndex((a) => a.startsWith('--'));
const wanted = firstFlag === -1 ? args : args.slice(0, firstFlag);
if (wanted.length === 0) {
  console.log(`benchmarks: ${names.join(', ')}\nusage: npm run bench -- <name> [<name> …] [--flag …]`);
} else {
  for (const name of wanted) {
    if (!names.includes(name)) {
      console.error(`no benchmark ${name}; there are: ${names.join(', ')}`);
      process.exit(2);
    }
    await import(`./${name}.ts`);
  }
}

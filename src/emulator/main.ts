import { parseArgs } from 'node:util';
import { DEMO_LICENSEES } from './seed.ts';
import { startEmulator } from './server.ts';

/** `npm run emulator -- --port 4010`: the emulated reservation service alone. */
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4010' },
    host: { type: 'string', default: '127.0.0.1' },
    seed: { type: 'string', default: '1' },
    now: { type: 'string' },
    'no-rate-limit': { type: 'boolean', default: false },
    'rate-limit': { type: 'string', default: '240' },
    'rate-window-ms': { type: 'string', default: '60000' },
  },
});

function int(name: string, text: string, min: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) {
    console.error(`--${name} must be a whole number of at least ${min}, got ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return n;
}

const started = performance.now();
const emulator = await startEmulator({
  port: int('port', values.port, 0),
  host: values.host,
  seed: int('seed', values.seed, 0),
  now: values.now,
  rateLimit: values['no-rate-limit'] ? false : int('rate-limit', values['rate-limit'], 1),
  rateWindowMs: int('rate-window-ms', values['rate-window-ms'], 1),
});
console.log(
  `reservation service emulator listening at ${emulator.url} (ready in ${Math.round(performance.now() - started)} ms)`,
);
console.log(`  REST:     ${emulator.url}/api/v102/<endpoint>`);
console.log(`  control:  ${emulator.url}/_emulator/requests`);
for (const l of DEMO_LICENSEES) console.log(`  licensee ${l.systemIdentifier}: key ${l.key} (time zone ${l.timeZone})`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => void emulator.close().then(() => process.exit(0)));
}

import { loadConfig } from '../src/config/environment.ts';
import { createGateway } from '../src/gateway.ts';
import { viewConversions } from '../src/upstream/record-view.ts';
import { machine, startProcess, stop } from './lib.ts';

/**
 * The gateway's CPU per answer of S4's query (1000 reservations with contact, rooms and guests),
 * one request at a time, the gateway in this process and the emulator in its own (so that
 * process.cpuUsage counts the gateway alone: its HTTP client, JSON parsing, decoding, execution and
 * serialisation). Two cases: the same page each time (kept for UPSTREAM_PAGE_TTL_MS, as S4 reads
 * it), and a page read and decoded afresh each time (UPSTREAM_PAGE_TTL_MS=0, as S4b's distinct pages
 * are). The response cache is off. `--runs N` answers per case (default 60).
 */
const S4 =
  '{ event(eventId: 5001) { reservations(first: 1000) { edges { node { reservationNumber status arrivalDate ' +
  'contact { firstName lastName email } rooms { roomType guests { firstName lastName } } } } } } }';

const runsFlag = process.argv.indexOf('--runs');
const RUNS = runsFlag === -1 ? 60 : Number(process.argv[runsFlag + 1]);
const WARMUP = 20;

const emulator = await startProcess('src/emulator/main.ts', ['--port', '0', '--no-rate-limit']);
const rows: string[] = [];
try {
  for (const [name, pageTtl] of [
    ['same page (kept)', '5000'],
    ['page decoded afresh', '0'],
  ] as const) {
    const config = loadConfig({
      LOG_LEVEL: 'silent',
      UPSTREAM_BASE_URL: emulator.url,
      UPSTREAM_KEY: 'demo-key-1001',
      UPSTREAM_SYSTEM_IDENTIFIER: '1001',
      UPSTREAM_RATE_LIMIT: '100000',
      UPSTREAM_PAGE_TTL_MS: pageTtl,
      RESPONSE_CACHE: 'off',
    });
    const gateway = createGateway({ ...config, upstreamBaseUrl: emulator.url });
    const ask = async () => {
      const res = await gateway.yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: S4 }),
      });
      const text = await res.text();
      if (res.status !== 200 || text.includes('"errors"')) throw new Error(`${res.status}: ${text.slice(0, 300)}`);
      return text.length;
    };
    for (let i = 0; i < WARMUP; i++) await ask();
    const conversions0 = viewConversions.count;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let bytes = 0;
    for (let i = 0; i < RUNS; i++) bytes = await ask();
    const cpu = process.cpuUsage(cpu0);
    const wall = performance.now() - t0;
    rows.push(
      `| ${name} | ${((cpu.user + cpu.system) / 1000 / RUNS).toFixed(1)} | ${(wall / RUNS).toFixed(1)} | ` +
        `${Math.round((viewConversions.count - conversions0) / RUNS)} | ${bytes} |`,
    );
    await gateway.close();
  }
} finally {
  await stop(emulator.child);
}

console.log(`### S4's query, one at a time (${machine()})

${RUNS} answers per case after ${WARMUP} warm-up ones; the gateway in the benchmark's process, the emulator in its own.

| case | gateway CPU ms per answer | wall ms per answer | field conversions per answer | answer bytes |
|---|---|---|---|---|
${rows.join('\n')}`);

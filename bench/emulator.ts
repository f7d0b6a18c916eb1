import { authenticate, DURATION_S, load, machine, RUNS, startProcess, stop, summary, WARMUP_S } from './lib.ts';

/**
 * The emulator must never be the bottleneck of later measurements (issue: the emulator):
 * getevent throughput at 50 connections, a 1000-reservation page's latency at 10 connections,
 * and the time from process start to listening with the full demo data. Rate limit off.
 */
const startups: number[] = [];
const rps: number[] = [];
const pageP50: number[] = [];
const pageP99: number[] = [];
const errors: number[] = [];

for (let run = 0; run < RUNS; run++) {
  const emulator = await startProcess('src/emulator/main.ts', ['--port', '0', '--no-rate-limit']);
  startups.push(emulator.startupMs);
  const token = await authenticate(emulator.url);
  const headers = { 'user-agent': 'bench/1', 'content-type': 'application/x-www-form-urlencoded' };
  const event = await load({
    url: `${emulator.url}/api/v102/getevent`,
    method: 'POST',
    headers,
    body: `token=${token}&eventId=5001`,
    connections: 50,
  });
  rps.push(event.rps);
  // Pages 1..26 of the large event in turn, each a full 1000-record page.
  const requests = Array.from({ length: 25 }, (_, i) => ({
    method: 'POST' as const,
    headers,
    body: `token=${token}&eventId=5001&page=${i + 1}`,
  }));
  const page = await load({ url: `${emulator.url}/api/v102/getreservation`, requests, connections: 10 });
  pageP50.push(page.p50);
  pageP99.push(page.p99);
  errors.push(event.errors + event.non2xx + page.errors + page.non2xx);
  await stop(emulator.child);
  console.error(
    `run ${run + 1}: startup ${emulator.startupMs.toFixed(0)} ms, getevent ${event.rps.toFixed(0)} req/s, page p50 ${page.p50} ms p99 ${page.p99} ms`,
  );
}

console.log(`### Emulator (${machine()})

Load generator: autocannon in the same process as the runner, on the same machine as the emulator
(a separate process). ${RUNS} runs of ${WARMUP_S} s warm-up + ${DURATION_S} s; median (min–max).

| measure | goal | result |
|---|---|---|
| start to listening, full demo data | < 3000 ms | ${summary(startups)} ms |
| getevent, 50 connections | ≥ 3000 req/s | ${summary(rps)} req/s |
| 1000-reservation page, 10 connections, p50 | | ${summary(pageP50)} ms |
| 1000-reservation page, 10 connections, p99 | < 50 ms | ${summary(pageP99)} ms |
| errors and non-2xx answers | 0 | ${errors.reduce((a, b) => a + b, 0)} |

Reproduce: \`npm run bench -- emulator\`
`);

import { loadConfig } from '../src/config/environment.ts';
import { startEmulator } from '../src/emulator/server.ts';
import { createGateway } from '../src/gateway.ts';
import { HOSTILE_DOCUMENTS } from '../test/helpers/hostile-documents.ts';
import { machine, median, RUNS } from './lib.ts';

/**
 * How fast the gateway refuses the hostile documents of test/helpers/hostile-documents.ts (goal: under 50 ms each, no
 * upstream call). In one process through yoga.fetch, so the figure is the gateway's own work:
 * parse with the token limit, validation, limits and the cost estimate. Each send carries a fresh
 * comment, so Yoga's parse and validation caches never answer for it (an attacker varies documents
 * too). Each document is sent once to warm up, then 20 times per run; RUNS runs; the median of the
 * runs' medians and the slowest send.
 */
const SENDS = 20;
const emulator = await startEmulator({ port: 0, rateLimit: false });
const gateway = createGateway({ ...loadConfig({ LOG_LEVEL: 'silent' }), upstreamBaseUrl: emulator.url });

let sent = 0;
const send = async (document: string, variables?: Record<string, unknown>) => {
  const query = `${document}\n# ${++sent}`;
  const res = await gateway.yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
};

console.log(`Refusal of hostile documents (${machine()}); ${RUNS} runs of ${SENDS} sends, in-process (yoga.fetch)\n`);
console.log('| document | bytes | code | median ms | slowest ms | upstream calls |');
console.log('|---|---|---|---|---|---|');
for (const hostile of HOSTILE_DOCUMENTS) {
  emulator.state.log = [];
  await send(hostile.query, hostile.variables);
  const runMedians: number[] = [];
  let slowest = 0;
  let code: string | undefined;
  for (let run = 0; run < RUNS; run++) {
    const times: number[] = [];
    for (let i = 0; i < SENDS; i++) {
      const start = performance.now();
      const body = await send(hostile.query, hostile.variables);
      times.push(performance.now() - start);
      code = body.errors?.[0]?.extensions?.code;
    }
    runMedians.push(median(times));
    slowest = Math.max(slowest, ...times);
  }
  const calls = emulator.state.log.length;
  console.log(
    `| ${hostile.name} | ${hostile.query.length} | ${code} | ${median(runMedians).toFixed(1)} | ${slowest.toFixed(1)} | ${calls} |`,
  );
}
await gateway.close();
await emulator.close();

import { sampleRss } from './compare/rss.ts';
import {
  authenticate,
  DURATION_S,
  load,
  machine,
  RUNS,
  startBenchGateway,
  startProcess,
  stop,
  summary,
  WARMUP_S,
} from './lib.ts';

/**
 * The gateway under load, against the emulator in its own process (rate limits lifted on both
 * sides, so the figures measure the gateway rather than the budget). Two operations:
 * - EventPage: event, 14 hotels and a page of 5 reservations with their hotels (the GraphiQL example);
 * - Page100: 100 reservations with contact and hotel names.
 * Beside them, one getreservation page read straight from the REST service, the call a client
 * without the gateway pays for even a short list (the service pages by 1000).
 */
const EVENT_PAGE = `{ event(eventId: 5001) { name city startDate hotels { hotelId name starRating } reservations(first: 5) { totalCount edges { node { reservationNumber status arrivalDate hotel { name } } } } } }`;
const PAGE_100 = `{ event(eventId: 5001) { reservations(first: 100, after: null) { edges { node { reservationNumber status contact { firstName lastName email } hotel { name } } } } } }`;

const results: Record<string, { rps: number[]; p50: number[]; p99: number[]; errors: number }> = {};
const record = (name: string, r: { rps: number; p50: number; p99: number; errors: number; non2xx: number }) => {
  const e = (results[name] ??= { rps: [], p50: [], p99: [], errors: 0 });
  e.rps.push(r.rps);
  e.p50.push(r.p50);
  e.p99.push(r.p99);
  e.errors += r.errors + r.non2xx;
};
let peakRss = 0;

for (let run = 0; run < RUNS; run++) {
  const emulator = await startProcess('src/emulator/main.ts', ['--port', '0', '--no-rate-limit']);
  const gateway = await startBenchGateway(emulator.url);
  const rss = sampleRss(gateway.child.pid!);
  const gql = (query: string) => ({
    url: `${gateway.url}/graphql`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  record('EventPage, 50 connections', await load({ ...gql(EVENT_PAGE), connections: 50 }));
  record('EventPage, 10 connections', await load({ ...gql(EVENT_PAGE), connections: 10 }));
  record('Page100, 10 connections', await load({ ...gql(PAGE_100), connections: 10 }));
  const token = await authenticate(emulator.url);
  record(
    'direct REST getreservation page 1 (1000 records), 10 connections',
    await load({
      url: `${emulator.url}/api/v102/getreservation`,
      method: 'POST',
      headers: { 'user-agent': 'bench/1', 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${token}&eventId=5001&page=1`,
      connections: 10,
    }),
  );
  peakRss = Math.max(peakRss, rss.stop());
  await stop(gateway.child);
  await stop(emulator.child);
  console.error(`run ${run + 1} done`);
}

const rows = Object.entries(results).map(
  ([name, r]) => `| ${name} | ${summary(r.rps)} | ${summary(r.p50)} | ${summary(r.p99)} | ${r.errors} |`,
);
console.log(`### Gateway (${machine()})

autocannon on the same machine as the gateway and the emulator (three processes), ${RUNS} runs of
${WARMUP_S} s warm-up + ${DURATION_S} s, median (min–max). Rate limits lifted on both sides
(\`--no-rate-limit\`, \`UPSTREAM_RATE_LIMIT=100000\`); events and hotels come from the gateway's
60 s cache, reservation pages and page counts from the emulator on every request.

| measure | req/s | p50 ms | p99 ms | errors + non-2xx |
|---|---|---|---|---|
${rows.join('\n')}

Peak RSS of the gateway process: ${peakRss.toFixed(0)} MiB.

Reproduce: \`npm run bench -- gateway\`
`);

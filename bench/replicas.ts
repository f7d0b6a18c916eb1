import autocannon from 'autocannon';
import { findRedisServer, REDIS_INSTALL_HINT, startRedis } from '../test/helpers/redis.ts';
import {
  DURATION_S,
  machine,
  RUNS,
  type Started,
  startBenchGateway,
  startProcess,
  stop,
  summary,
  WARMUP_S,
} from './lib.ts';

/**
 * Throughput of one gateway against three, all on one Redis (budget, token and cache
 * shared), on the cached part of the EventPage query (the event and its hotels: every answer comes
 * from the cache, so the figures measure the gateways and Redis, not the emulator), the emulator in
 * its own process with its rate limit lifted. The three replicas are loaded at once, a third of
 * the connections each (what a round-robin load balancer does), and their throughputs added. One
 * gateway with its memory stores is the reference.
 */
const EVENT_PAGE = `{ event(eventId: 5001) { name city startDate hotels { hotelId name starRating } } }`;
const SETUPS = [
  { label: '1, memory stores (no Redis)', count: 1, redis: false },
  { label: '1 on Redis', count: 1, redis: true },
  { label: '3 on Redis', count: 3, redis: true },
];
const CONNECTIONS = 48;

const serverPath = findRedisServer();
if (!serverPath) {
  console.error(REDIS_INSTALL_HINT);
  process.exit(2);
}

const request = (gateway: Started, connections: number, duration: number) =>
  autocannon({
    url: `${gateway.url}/graphql`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: EVENT_PAGE }),
    connections,
    duration,
  });

/** All replicas at once for `duration`, the connections split evenly; requests per second added up. */
async function loadAll(gateways: Started[], duration: number): Promise<{ rps: number; failed: number }> {
  const results = await Promise.all(
    gateways.map((gateway) => request(gateway, CONNECTIONS / gateways.length, duration)),
  );
  return {
    rps: results.reduce((sum, r) => sum + r.requests.average, 0),
    failed: results.reduce((sum, r) => sum + r.errors + r.non2xx, 0),
  };
}

const results: Record<string, { rps: number[]; failed: number }> = {};
for (let run = 0; run < RUNS; run++) {
  for (const { label, count, redis: onRedis } of SETUPS) {
    const redis = await startRedis(serverPath);
    const emulator = await startProcess('src/emulator/main.ts', ['--port', '0', '--no-rate-limit']);
    const gateways = await Promise.all(
      Array.from({ length: count }, (_, n) =>
        startBenchGateway(emulator.url, {
          UPSTREAM_USER_AGENT: `bench-replica-${n + 1}`,
          ...(onRedis ? { REDIS_URL: redis.url } : {}),
        }),
      ),
    );
    await loadAll(gateways, WARMUP_S);
    const measured = await loadAll(gateways, DURATION_S);
    const entry = (results[label] ??= { rps: [], failed: 0 });
    entry.rps.push(measured.rps);
    entry.failed += measured.failed;
    for (const gateway of gateways) await stop(gateway.child);
    await stop(emulator.child);
    await redis.close();
    console.error(`run ${run + 1}, ${label} done`);
  }
}

console.log(`\n### One vs three replicas on one Redis (${machine()})\n`);
console.log(
  `\`npm run bench -- replicas\`: \`${EVENT_PAGE}\`, ${CONNECTIONS} connections in all, ${WARMUP_S} s warm-up then ${DURATION_S} s, ${RUNS} runs; median (min–max).\n`,
);
console.log('| gateways | requests/s | failed |');
console.log('|---|---|---|');
for (const { label } of SETUPS)
  console.log(`| ${label} | ${summary(results[label]!.rps)} | ${results[label]!.failed} |`);
const ratio = summary(
  results['3 on Redis']!.rps.map((rps, i) => rps / results['1 on Redis']!.rps[i]!),
  2,
);
console.log(`\nThree replicas over one: ${ratio}×.`);

import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { treeCpuMs } from './compare/cpu.ts';
import { type Emulator, type LoggedRequest, served, startEmulator } from './compare/emulator.ts';
import { type GrowthRow, growthTable } from './compare/growth-table.ts';
import { benchEvent, benchKey, benchLicensee } from './compare/licensees-emulator.ts';
import { replaceSection } from './compare/markdown.ts';
import { count, noOutcomes } from './compare/outcome.ts';
import { sampleRss, treeRssMiB } from './compare/rss.ts';
import { S8_EVENTS, S8_POLL_MS, simulateSubscribers } from './compare/s8.ts';
import { EVENT, walkOurs } from './compare/scenarios.ts';
import { WARM_EVENT } from './compare/stream.ts';
import { startOurs } from './compare/systems.ts';
import { machine, type Started, stop } from './lib.ts';

/**
 * `npm run bench -- growth` (issue 28, "How cost grows"): how the gateway's cost grows with three
 * inputs, each point on a fresh gateway (`node scripts/start.mjs`) and a fresh emulator, one run:
 *
 * 1. licensees in one LICENSEES_FILE (GATEWAY_AUTH=api-key, a client key each), against the
 *    emulator of bench/compare/licensees-emulator.ts (each licensee its own copy of event 5002):
 *    a fixed number of reads (BENCH_GROWTH_REQUESTS) spread evenly over all licensees, three
 *    queries each (an event, its hotels, a page of 50 reservations with totalCount), 10
 *    connections, no warm-up (a licensee's first reads are part of what a licensee costs): RSS
 *    after the load beyond RSS at ready, CPU ms of the gateway's process tree per operation,
 *    upstream calls (authenticate included) per operation.
 * 2. `reservationChanged` subscribers as S8 runs them (half SSE, half graphql-ws ten a socket, over
 *    events 5001–5003, 2 s polling, the emulator's real 240/min limit, one booking per event):
 *    RSS with all subscribed beyond ready, CPU % of a core over BENCH_GROWTH_IDLE_S idle
 *    seconds, upstream calls a minute while idle.
 * 3. S5 walks of event 5001 (25,600 reservations), 1000 a request, one after the other, of the
 *    first 1, 10 and all 26 pages (no demo event holds exactly 10,000), after one page of event
 *    5002 (the document's shape compiled, the token held, nothing of 5001): wall time, upstream
 *    calls (authenticate aside), peak RSS of the process tree, CPU ms per 1000 records.
 *
 * The shape of each figure's curve is computed from its first and last points (growth-table.ts).
 * Writes the table between the growth markers of docs/benchmarks.md (BENCH_GROWTH_WRITE=0: prints
 * it only). BENCH_GROWTH_LICENSEES, BENCH_GROWTH_SUBSCRIBERS, BENCH_GROWTH_PAGES (comma-separated
 * points) shorten it.
 */

/** Comma-separated points; empty leaves the series out. */
const list = (text: string) => (text.trim() ? text.split(',').map(Number) : []);
const LICENSEES = list(process.env.BENCH_GROWTH_LICENSEES ?? '1,10,100');
const REQUESTS = Number(process.env.BENCH_GROWTH_REQUESTS ?? 3000);
const SUBSCRIBERS = list(process.env.BENCH_GROWTH_SUBSCRIBERS ?? '100,1000,10000');
const IDLE_S = Number(process.env.BENCH_GROWTH_IDLE_S ?? 15);
const PAGES = list(process.env.BENCH_GROWTH_PAGES ?? '1,10,26');
const WRITE = process.env.BENCH_GROWTH_WRITE !== '0';
const CONNECTIONS = 10;

const MARKERS = {
  name: 'growth',
  start: '<!-- growth:start -->',
  end: '<!-- growth:end -->',
  heading: 'How cost grows',
};

const clientKey = (i: number) => `growth-client-key-${i}`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One point on a fresh emulator and gateway, both stopped after. */
async function withGateway<T>(
  emulator: Emulator,
  env: Record<string, string>,
  measure: (url: string, gateway: Started) => Promise<T>,
): Promise<T> {
  let gateway: Started | undefined;
  try {
    gateway = await startOurs({ UPSTREAM_BASE_URL: emulator.url, ...env });
    return await measure(`${gateway.url}/graphql`, gateway);
  } finally {
    if (gateway) await stop(gateway.child);
    await emulator.close();
  }
}

/** Upstream calls by endpoint, 429 answers aside. */
function byEndpoint(log: readonly LoggedRequest[]): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const r of log) if (r.status !== 429) calls[r.endpoint] = (calls[r.endpoint] ?? 0) + 1;
  return calls;
}

const endpointList = (calls: Record<string, number>) =>
  Object.entries(calls)
    .map(([endpoint, n]) => `${endpoint} ${n}`)
    .join(', ');

interface LicenseePoint {
  rssMiB: number;
  rssGrowthMiB: number;
  cpuMsPerOp: number;
  callsPerOp: number;
  authenticates: number;
  /** Upstream calls by endpoint. */
  endpoints: Record<string, number>;
  seconds: number;
  failed: number;
}

const LICENSEE_QUERIES = [
  'query ($id: Int!) { event(eventId: $id) { eventId name city startDate endDate } }',
  'query ($id: Int!) { event(eventId: $id) { hotels { hotelId name starRating } } }',
  'query ($id: Int!) { event(eventId: $id) { reservations(first: 50) { totalCount pageInfo { hasNextPage endCursor } edges { node { reservationNumber status arrivalDate hotel { name } } } } } }',
];

async function licenseePoint(licensees: number, dir: string): Promise<LicenseePoint> {
  const file = join(dir, `licensees-${licensees}.json`);
  const ids = Array.from({ length: licensees }, (_, n) => n + 1);
  writeFileSync(
    file,
    JSON.stringify({
      licensees: ids.map((i) => ({
        id: `growth-${i}`,
        systemIdentifier: benchLicensee(i),
        key: benchKey(i),
        timezone: 'UTC',
        clients: [{ name: `client-${i}`, apiKeySha256: sha256(clientKey(i)), scopes: ['read'] }],
      })),
    }),
  );
  const emulator = await startEmulator({ rateLimit: false, benchLicensees: licensees });
  const env = { LICENSEES_FILE: file, GATEWAY_AUTH: 'api-key', UPSTREAM_RATE_LIMIT: '100000' };
  return withGateway(emulator, env, async (url, gateway) => {
    const pid = gateway.child.pid!;
    // Every licensee's three reads in turn: each request takes the next, across all connections.
    const requests = ids.flatMap((i) =>
      LICENSEE_QUERIES.map((query) => ({
        headers: { 'content-type': 'application/json', authorization: `Bearer ${clientKey(i)}` },
        body: JSON.stringify({ query, variables: { id: benchEvent(i) } }),
      })),
    );
    let next = 0;
    const outcomes = noOutcomes();
    const rssReady = treeRssMiB(pid);
    const from = Date.now();
    const cpuFrom = treeCpuMs(pid);
    const result = await autocannon({
      url,
      method: 'POST',
      connections: CONNECTIONS,
      amount: REQUESTS,
      requests: [
        {
          method: 'POST',
          setupRequest: (req: autocannon.Request) => ({ ...req, ...requests[next++ % requests.length]! }),
          onResponse: (status: number, body: string) => count(outcomes, status, body),
        },
      ],
    });
    const cpuMs = treeCpuMs(pid) - cpuFrom;
    const seconds = (Date.now() - from) / 1000;
    await sleep(500);
    const log = await emulator.requestsSince(from);
    const operations = result.requests.total;
    const rssMiB = treeRssMiB(pid);
    return {
      rssMiB,
      rssGrowthMiB: rssMiB - rssReady,
      cpuMsPerOp: cpuMs / operations,
      callsPerOp: served(log) / operations,
      authenticates: log.filter((r) => r.endpoint === 'authenticate').length,
      endpoints: byEndpoint(log),
      seconds,
      failed: operations - outcomes.ok + result.errors + result.timeouts,
    };
  });
}

interface SubscriberPoint {
  rssMiB: number;
  rssGrowthMiB: number;
  idleCpuPercent: number;
  idleCallsPerMin: number;
  accepted: number;
  reachedAll: number;
}

async function subscriberPoint(subscribers: number): Promise<SubscriberPoint> {
  const emulator = await startEmulator({ rateLimit: true });
  // As S8 (bench/compare.ts): one anonymous client holds every subscription; a connection per SSE
  // stream and one per ten graphql-ws subscriptions.
  const env = {
    CHANGES_POLL_INTERVAL_MS: String(S8_POLL_MS),
    SUBSCRIPTIONS_PER_CLIENT: String(Math.min(10_000, subscribers + 10)),
    MAX_CONNECTIONS: String(Math.max(1024, Math.ceil(subscribers / 2) + Math.ceil(subscribers / 20) + 100)),
  };
  return withGateway(emulator, env, async (url, gateway) => {
    const f = await simulateSubscribers(url, gateway.child.pid!, emulator, {
      subscribers,
      idleS: IDLE_S,
      bookingsPerEvent: 1,
    });
    return {
      rssMiB: f.rssSubscribedMiB,
      rssGrowthMiB: f.rssSubscribedMiB - f.rssFeedsMiB,
      idleCpuPercent: f.idleCpuPercent,
      idleCallsPerMin: f.idleCallsPerMin,
      accepted: f.accepted,
      reachedAll: f.reachedAll,
    };
  });
}

interface WalkPoint {
  records: number;
  ms: number;
  calls: number;
  /** Upstream calls by endpoint. */
  endpoints: Record<string, number>;
  peakRssMiB: number;
  /** Peak RSS beyond the RSS before the walk. */
  peakGrowthMiB: number;
  cpuMsPer1000: number;
}

async function walkPoint(pages: number): Promise<WalkPoint> {
  const emulator = await startEmulator({ rateLimit: false });
  return withGateway(emulator, { UPSTREAM_RATE_LIMIT: '100000' }, async (url, gateway) => {
    const pid = gateway.child.pid!;
    await walkOurs(url, 1, WARM_EVENT);
    const rssBefore = treeRssMiB(pid);
    const rss = sampleRss(pid, 100);
    const from = Date.now();
    const cpuFrom = treeCpuMs(pid);
    const t0 = performance.now();
    const records = await walkOurs(url, pages, EVENT);
    const ms = performance.now() - t0;
    const cpuMs = treeCpuMs(pid) - cpuFrom;
    const peakRssMiB = rss.stop();
    await sleep(500);
    const log = (await emulator.requestsSince(from)).filter((r) => r.endpoint !== 'authenticate');
    const endpoints = byEndpoint(log);
    return {
      records,
      ms,
      calls: served(log),
      endpoints,
      peakRssMiB,
      peakGrowthMiB: peakRssMiB - rssBefore,
      cpuMsPer1000: (cpuMs / records) * 1000,
    };
  });
}

const load = () => loadavg()[0]!;
const began = performance.now();
const dir = mkdtempSync(join(tmpdir(), 'growth-'));
const rows: GrowthRow[] = [];
const notes: string[] = [];
try {
  let loadFrom = load();
  const licenseePoints: LicenseePoint[] = [];
  for (const n of LICENSEES) {
    console.error(`licensees: ${n}`);
    const point = await licenseePoint(n, dir);
    console.error(`  ${JSON.stringify(point)}`);
    licenseePoints.push(point);
  }
  const licenseeLoad = [loadFrom, load()] as const;
  const licenseeSeries = `licensees (${LICENSEES.join(' / ')}), ${REQUESTS} reads`;
  const licenseeWhy = {
    rss: 'each licensee holds its own token, budget and response cache, and the upstream pages its reads fetched (1000 reservations behind a page of 50) are kept per licensee: 5 s in the page cache, then as stale copies (`UPSTREAM_STALE_MAX_MS`, 10 min; one store for the process, bounded at 64 MiB of answer text), each as its bytes, decoded again when read (src/upstream/kept-page.ts)',
    cpu: 'an answer the licensee has not had within its lifetime (events and hotels 1 min, reservations 5 s) misses the response cache and runs resolvers, decoding and the upstream client: at a fixed number of reads, the more licensees, the fewer hits',
    calls:
      'caches are per licensee (one never sees another’s data): each pays an authenticate and its own reads, and its reservation page and page count again every 5 s the load lasts (`UPSTREAM_PAGE_TTL_MS`): calls grow with licensees × the load’s duration',
  };
  rows.push(
    {
      series: licenseeSeries,
      figure: 'RSS after the load (MiB; + beyond ready)',
      inputs: LICENSEES,
      figures: licenseePoints.map((p) => p.rssMiB),
      added: licenseePoints.map((p) => p.rssGrowthMiB),
      digits: 1,
      why: licenseeWhy.rss,
      load: licenseeLoad,
    },
    {
      series: licenseeSeries,
      figure: 'gateway CPU per read (ms)',
      inputs: LICENSEES,
      figures: licenseePoints.map((p) => p.cpuMsPerOp),
      digits: 3,
      why: licenseeWhy.cpu,
      load: licenseeLoad,
    },
    {
      series: licenseeSeries,
      figure: 'upstream calls per read (authenticate included)',
      inputs: LICENSEES,
      figures: licenseePoints.map((p) => p.callsPerOp),
      digits: 4,
      why: licenseeWhy.calls,
      load: licenseeLoad,
    },
  );
  notes.push(
    `Licensees: the load took ${licenseePoints.map((p) => p.seconds.toFixed(1)).join(' / ')} s; upstream calls by endpoint ${licenseePoints.map((p) => endpointList(p.endpoints)).join(' / ')}; reads not answered with data ${licenseePoints.map((p) => p.failed).join(' / ')}.`,
  );

  loadFrom = load();
  const subscriberPoints: SubscriberPoint[] = [];
  for (const n of SUBSCRIBERS) {
    console.error(`subscribers: ${n}`);
    const point = await subscriberPoint(n);
    console.error(`  ${JSON.stringify(point)}`);
    subscriberPoints.push(point);
  }
  const subscriberLoad = [loadFrom, load()] as const;
  const subscriberSeries = `\`reservationChanged\` subscribers (${SUBSCRIBERS.join(' / ')})`;
  rows.push(
    {
      series: subscriberSeries,
      figure: 'RSS with all subscribed (MiB; + beyond one subscriber per event)',
      inputs: SUBSCRIBERS,
      figures: subscriberPoints.map((p) => p.rssMiB),
      added: subscriberPoints.map((p) => p.rssGrowthMiB),
      digits: 0,
      why: 'each subscriber holds a socket or an SSE response, a graphql-ws or SSE session and its operation’s state; the three feeds (one per event, their baseline reads) are paid once, before the "+"',
      load: subscriberLoad,
    },
    {
      series: subscriberSeries,
      figure: `CPU while idle, ${IDLE_S} s (% of a core)`,
      inputs: SUBSCRIBERS,
      figures: subscriberPoints.map((p) => p.idleCpuPercent),
      digits: 1,
      why: 'polls cost the same at any count; what grows is per connection (keep-alive pings, timers of each session)',
      load: subscriberLoad,
    },
    {
      series: subscriberSeries,
      figure: 'upstream calls a minute while idle',
      inputs: SUBSCRIBERS,
      figures: subscriberPoints.map((p) => p.idleCallsPerMin),
      digits: 0,
      why: 'one change feed per event, shared by all its subscribers: one poll per event every 2 s whatever their number',
      load: subscriberLoad,
    },
  );
  notes.push(
    `Subscribers: accepted ${subscriberPoints.map((p) => p.accepted).join(' / ')}, received every booking of their event ${subscriberPoints.map((p) => p.reachedAll).join(' / ')}.`,
  );

  loadFrom = load();
  const walkPoints: WalkPoint[] = [];
  for (const n of PAGES) {
    console.error(`S5 walk: ${n} pages`);
    const point = await walkPoint(n);
    console.error(`  ${JSON.stringify(point)}`);
    walkPoints.push(point);
  }
  const walkLoad = [loadFrom, load()] as const;
  const records = walkPoints.map((p) => p.records);
  const walkSeries = `S5 walk of event ${EVENT} (${records.map((r) => r.toLocaleString('en-US')).join(' / ')} reservations)`;
  rows.push(
    {
      series: walkSeries,
      figure: 'wall time (ms)',
      inputs: records,
      figures: walkPoints.map((p) => p.ms),
      digits: 0,
      why: 'each request of 1000 reads one upstream page, decodes it and builds, executes and serialises its 1000 edges: the same work a page',
      load: walkLoad,
    },
    {
      series: walkSeries,
      figure: 'upstream calls (authenticate aside)',
      inputs: records,
      figures: walkPoints.map((p) => p.calls),
      digits: 0,
      why: 'one upstream page of 1000 per request (the cursor names the page), nothing more',
      load: walkLoad,
    },
    {
      series: walkSeries,
      figure: 'peak RSS (MiB; + beyond the RSS before the walk)',
      inputs: records,
      figures: walkPoints.map((p) => p.peakRssMiB),
      added: walkPoints.map((p) => p.peakGrowthMiB),
      digits: 0,
      why: 'a request holds one decoded page of 1000 at a time; the pages read stay as their bytes, 5 s in the page cache and then as stale copies (bounded at 64 MiB of answer text): RSS climbs over the first pages, then levels off',
      load: walkLoad,
    },
    {
      series: walkSeries,
      figure: 'CPU per 1000 records (ms)',
      inputs: records,
      figures: walkPoints.map((p) => p.cpuMsPer1000),
      digits: 0,
      why: 'the per-page work above is the same for every page: per record, the cost does not depend on how far the walk has gone',
      load: walkLoad,
    },
  );
  notes.push(`S5 walks' upstream calls by endpoint: ${walkPoints.map((p) => endpointList(p.endpoints)).join(' / ')}.`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const minutes = (performance.now() - began) / 60_000;
const command = `npm run bench -- growth`;
const section = `### How cost grows (${machine()})

\`${command}\` (issue 28): each point on a fresh gateway (\`node scripts/start.mjs\`, so dist/ as \`npm start\` runs it)
and a fresh emulator, one run; the load and its clients run in the runner's process on the same 2
cores. **Licensees**: one \`LICENSEES_FILE\` of N licensees (\`GATEWAY_AUTH=api-key\`, a client key each)
against \`bench/compare/licensees-emulator.ts\` (the emulator with N licensees more, each owning its own
copy of event 5002: 1000 reservations, four hotels), \`UPSTREAM_RATE_LIMIT\` lifted; ${REQUESTS} reads
(an event, its hotels, a page of 50 reservations with \`totalCount\`) spread evenly over the N
licensees, ${CONNECTIONS} connections, no warm-up (a licensee's first reads are part of its cost).
**Subscribers**: S8 (half SSE streams, half graphql-ws ten a socket, over events ${S8_EVENTS.join(', ')}, ${S8_POLL_MS / 1000} s
polling, the emulator's real 240/min limit), ${IDLE_S} s idle, one booking per event. **S5 walks**: event
${EVENT}, 1000 a request, one after the other, the first ${PAGES.join(', ')} pages (no demo event holds
exactly 10,000 reservations: 10 pages of event ${EVENT} are), after one page of event ${WARM_EVENT}.
RSS and CPU of the gateway's process tree from \`/proc\`; upstream calls from the emulator's log.
The shape is computed from the figures (\`bench/compare/growth-table.ts\`): flat when the figure at the
largest input is at most 25 % above the smallest's; otherwise by the marginal cost, the slope of the
last segment over the first's: 0.5 to 2 linear, more worse than linear (x² gives 10 over 1 / 10 /
100), less sub-linear; for RSS, from the part the input adds (the "+": beyond the gateway's RSS at
ready, beyond one subscriber per event, or beyond the RSS before the walk). Load average (1 min) at the start and the end of each series
beside it: the machine is shared. The whole run took ${minutes.toFixed(1)} min.

${growthTable(rows.filter((r) => r.inputs.length > 0))}

${notes.join(' ')}

Reproduce: \`${command}\` (\`BENCH_GROWTH_LICENSEES\`, \`BENCH_GROWTH_SUBSCRIBERS\`, \`BENCH_GROWTH_PAGES\`:
comma-separated points; \`BENCH_GROWTH_REQUESTS\`, \`BENCH_GROWTH_IDLE_S\`; \`BENCH_GROWTH_WRITE=0\`
prints without writing).`;

console.log(section);
if (WRITE) {
  const path = new URL('../docs/benchmarks.md', import.meta.url);
  writeFileSync(path, replaceSection(readFileSync(path, 'utf8'), MARKERS, section));
  console.error(`written between the growth markers of docs/benchmarks.md (${minutes.toFixed(1)} min)`);
}

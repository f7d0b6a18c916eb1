import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { machine, RUNS, startProcess, stop, summary } from './lib.ts';

/**
 * `npm run bench -- stream`: S5, event 5001's 25,600 reservations, three ways, each against a
 * fresh gateway (built, `node dist/main.js` through scripts/start.mjs) over one emulator process,
 * rate limits lifted, response cache off (a repeated walk must not be served from it):
 * - the cursor walk: 26 queries of `first: 1000, after: <endCursor>`, one after the other;
 * - one query with `edges @stream(initialCount: 0)` over multipart/mixed;
 * - the same 26 pages read straight from the REST service, one after the other.
 * Each gateway first answers a short walk and a short stream of another event (its token fetched,
 * its code warmed, no page of event 5001 read), then is measured.
 * Time to the first record, total time, upstream calls (the emulator's log) and the gateway's
 * peak RSS (sampled every 50 ms).
 */
const NODE = 'node { reservationNumber status arrivalDate contact { firstName lastName email } }';
const WALK_PAGE = `query ($after: String) { event(eventId: 5001) { reservations(first: 1000, after: $after) { pageInfo { hasNextPage endCursor } edges { ${NODE} } } } }`;
const STREAM = `{ event(eventId: 5001) { reservations(first: 25600) { edges @stream(initialCount: 0) { ${NODE} } } } }`;
const EXPECTED = 25_600;

interface Figures {
  firstMs: number;
  totalMs: number;
  calls: number;
  peakRssMiB: number;
}

async function startGateway(upstream: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['scripts/start.mjs'], {
    env: {
      ...process.env,
      PORT: '0',
      OPS_PORT: '0',
      LOG_LEVEL: 'warn',
      UPSTREAM_BASE_URL: upstream,
      UPSTREAM_KEY: 'demo-key-1001',
      UPSTREAM_SYSTEM_IDENTIFIER: '1001',
      UPSTREAM_RATE_LIMIT: '100000',
      RESPONSE_CACHE: 'off',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const ready = /ready at (http:\/\/\S+\/graphql)/.exec(out);
      if (ready) resolve(ready[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the gateway exited with ${code}:\n${out}`)));
  });
  return { child, url };
}

/** Runs `work` while sampling the RSS of `pid`. */
async function sampled<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; peakRssMiB: number }> {
  let peak = 0;
  const sample = () => {
    try {
      peak = Math.max(
        peak,
        Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024,
      );
    } catch {
      // the process is gone
    }
  };
  const timer = setInterval(sample, 50);
  try {
    const result = await work();
    sample();
    return { result, peakRssMiB: peak };
  } finally {
    clearInterval(timer);
  }
}

async function warmUp(url: string): Promise<void> {
  const post = (query: string, accept: string) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept },
      body: JSON.stringify({ query }),
    });
  for (let i = 0; i < 3; i++) {
    await (
      await post(`{ event(eventId: 5002) { reservations(first: 10) { edges { ${NODE} } } } }`, 'application/json')
    ).text();
    await (
      await post(
        `{ event(eventId: 5002) { reservations(first: 10) { edges @stream(initialCount: 0) { ${NODE} } } } }`,
        'multipart/mixed',
      )
    ).text();
  }
}

async function requestsLogged(emulatorUrl: string): Promise<number> {
  const res = await fetch(`${emulatorUrl}/_emulator/requests`);
  return ((await res.json()) as { requests: { endpoint: string }[] }).requests.filter(
    (r) => r.endpoint !== 'authenticate',
  ).length;
}

async function cursorWalk(url: string): Promise<{ firstMs: number; totalMs: number }> {
  const started = performance.now();
  let firstMs = 0;
  let after: string | null = null;
  let records = 0;
  for (;;) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: WALK_PAGE, variables: { after } }),
    });
    const body = (await res.json()) as {
      data: { event: { reservations: { pageInfo: { hasNextPage: boolean; endCursor: string }; edges: unknown[] } } };
    };
    const page = body.data.event.reservations;
    records += page.edges.length;
    if (!firstMs && page.edges.length > 0) firstMs = performance.now() - started;
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  if (records !== EXPECTED) throw new Error(`the walk read ${records} records`);
  return { firstMs, totalMs: performance.now() - started };
}

async function streamed(url: string): Promise<{ firstMs: number; totalMs: number }> {
  const started = performance.now();
  let firstMs = 0;
  let records = 0;
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed' },
    body: JSON.stringify({ query: STREAM }),
  });
  // A part is complete once its Content-Length bytes are in (the boundary after it comes with the next part).
  let buffered = Buffer.alloc(0);
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      const headersEnd = buffered.indexOf('\r\n\r\n');
      if (headersEnd === -1) break;
      const length = Number(/content-length:\s*(\d+)/i.exec(buffered.subarray(0, headersEnd).toString())?.[1]);
      if (!Number.isFinite(length)) {
        buffered = buffered.subarray(headersEnd + 4);
        continue;
      }
      if (buffered.length < headersEnd + 4 + length) break;
      const json = buffered.subarray(headersEnd + 4, headersEnd + 4 + length).toString();
      buffered = buffered.subarray(headersEnd + 4 + length);
      const items = ((JSON.parse(json) as { incremental?: { items?: unknown[] }[] }).incremental ?? []).reduce(
        (n, increment) => n + (increment.items?.length ?? 0),
        0,
      );
      if (items > 0 && !firstMs) firstMs = performance.now() - started;
      records += items;
    }
  }
  if (records !== EXPECTED) throw new Error(`the stream delivered ${records} records`);
  return { firstMs, totalMs: performance.now() - started };
}

async function directRest(emulatorUrl: string): Promise<{ firstMs: number; totalMs: number }> {
  const headers = { 'user-agent': 'bench/1', 'content-type': 'application/x-www-form-urlencoded' };
  const auth = await fetch(`${emulatorUrl}/api/v102/authenticate`, {
    method: 'POST',
    headers,
    body: 'key=demo-key-1001&systemIdentifier=1001',
  });
  const { token } = (await auth.json()) as { token: string };
  const started = performance.now();
  let firstMs = 0;
  for (let page = 1; page <= 26; page++) {
    const res = await fetch(`${emulatorUrl}/api/v102/getreservation`, {
      method: 'POST',
      headers,
      body: `token=${token}&eventId=5001&page=${page}`,
    });
    await res.json();
    if (!firstMs) firstMs = performance.now() - started;
  }
  return { firstMs, totalMs: performance.now() - started };
}

spawnSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
const emulator = await startProcess('src/emulator/main.ts', ['--port', '0', '--no-rate-limit']);
const ways = { 'cursor walk (26 × first: 1000)': cursorWalk, 'one query, edges @stream': streamed } as const;
const figures: Record<string, Figures[]> = {};
try {
  for (let run = 0; run < RUNS; run++) {
    for (const [name, way] of Object.entries(ways)) {
      const gateway = await startGateway(emulator.url);
      await warmUp(gateway.url);
      const before = await requestsLogged(emulator.url);
      const { result, peakRssMiB } = await sampled(gateway.child.pid!, () => way(gateway.url));
      const calls = (await requestsLogged(emulator.url)) - before;
      await stop(gateway.child);
      (figures[name] ??= []).push({ ...result, calls, peakRssMiB });
      console.error(
        `${name}, run ${run + 1}: first record ${result.firstMs.toFixed(0)} ms, all ${result.totalMs.toFixed(0)} ms, ${calls} upstream calls, peak RSS ${peakRssMiB.toFixed(0)} MiB`,
      );
    }
    const direct = await directRest(emulator.url);
    (figures['direct REST (26 pages)'] ??= []).push({ ...direct, calls: 26, peakRssMiB: NaN });
  }
} finally {
  await stop(emulator.child);
}

const column = (values: number[]) => (values.some(Number.isNaN) ? '' : summary(values));
console.log(`### S5 walked three ways (${machine()})

Event 5001's 25,600 reservations (\`${NODE}\`). Gateway built and started with \`node scripts/start.mjs\`, a fresh
process per measurement, emulator in its own process, rate limits lifted, RESPONSE_CACHE=off; client on
the same machine. ${RUNS} runs, median (min–max). Load average at the end: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}.

| way | first record (ms) | all records (ms) | upstream calls | gateway peak RSS (MiB) |
|---|---|---|---|---|
${Object.entries(figures)
  .map(
    ([name, runs]) =>
      `| ${name} | ${column(runs.map((f) => f.firstMs))} | ${column(runs.map((f) => f.totalMs))} | ${column(runs.map((f) => f.calls))} | ${column(runs.map((f) => f.peakRssMiB))} |`,
  )
  .join('\n')}
`);

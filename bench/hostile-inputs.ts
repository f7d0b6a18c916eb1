import WebSocket from 'ws';
import { sampleRss, treeRssMiB } from './compare/rss.ts';
import { machine, startBenchGateway, startProcess, stop } from './lib.ts';

/**
 * `npm run bench -- hostile-inputs`: the gateway's memory under large inputs (goal: RSS growth
 * under 50 MiB). Before the bounds, 20 queries each padded with a 20 MB comment raised RSS from
 * 300 to ~700 MiB for good, and three 90 MB `connection_init` messages by 580 MiB. Each case
 * against a fresh gateway process (as `npm start` runs it) over an emulator process:
 * - 20 distinct 5 MB documents (a comment each, so no two are alike) in HTTP POST bodies, with the
 *   default bounds: refused by MAX_REQUEST_BYTES (413, on Content-Length);
 * - the same with MAX_REQUEST_BYTES at 8 MiB, so that each body is read and the document reaches
 *   QUERY_MAX_BYTES, which refuses it before parsing;
 * - the same with both bounds at their largest (QUERY_MAX_BYTES 16 MiB, MAX_REQUEST_BYTES 64 MiB):
 *   what is left when every document is parsed (the parse cache keeps at most 1 MiB of text);
 * - 20 WebSocket messages of 5 MB, each the first message of a fresh socket (before connection_init
 *   is answered): closed with 1009 by MAX_REQUEST_BYTES.
 * RSS (the process tree, /proc) before (after a warm-up), at its peak (sampled every 50 ms), and 3 s
 * after the last input; growth is after minus before.
 */
const INPUTS = 20;
const SIZE = 5 * 1024 * 1024;

interface Case {
  name: string;
  env: Record<string, string>;
  send(base: string, index: number): Promise<string>;
}

const documentOf = (index: number) => `# ${String(index).padStart(4, '0')} ${'x'.repeat(SIZE - 20)}\n{ __typename }`;

const post = (base: string, query: string) =>
  fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });

async function postDocument(base: string, index: number): Promise<string> {
  const res = await post(base, documentOf(index));
  const body = (await res.json()) as { errors?: { extensions?: { code?: string; limit?: string } }[] };
  const error = body.errors?.[0]?.extensions;
  return `${res.status} ${error?.limit ?? error?.code ?? 'ok'}`;
}

async function sendFrame(base: string, index: number): Promise<string> {
  const socket = new WebSocket(`${base.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  socket.on('error', () => {}); // the server cuts the connection while the frame is still being sent
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('unexpected-response', (_request, response) =>
      reject(new Error(`upgrade refused: ${response.statusCode}`)),
    );
  });
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  socket.send(JSON.stringify({ type: 'connection_init', payload: { padding: documentOf(index) } }));
  return `close ${await closed}`;
}

const CASES: Case[] = [
  { name: 'HTTP, 5 MB bodies (default bounds)', env: {}, send: postDocument },
  {
    name: 'HTTP, 5 MB documents (MAX_REQUEST_BYTES 8 MiB)',
    env: { MAX_REQUEST_BYTES: String(8 * 1024 * 1024) },
    send: postDocument,
  },
  {
    name: 'HTTP, 5 MB documents parsed (bounds at their largest)',
    env: { MAX_REQUEST_BYTES: String(64 * 1024 * 1024), QUERY_MAX_BYTES: String(16 * 1024 * 1024) },
    send: postDocument,
  },
  { name: 'WebSocket, 5 MB first messages (default bounds)', env: {}, send: sendFrame },
];

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const emulator = await startProcess('src/emulator/main.ts', ['--port', '0', '--no-rate-limit']);
const rows: string[] = [];
try {
  for (const test of CASES) {
    const gateway = await startBenchGateway(emulator.url, test.env);
    try {
      const pid = gateway.child.pid!;
      // Warm up: the token and the first operations.
      for (let i = 0; i < 5; i++) await (await post(gateway.url, '{ event(eventId: 5001) { name } }')).text();
      await pause(1000);
      const before = treeRssMiB(pid);
      const peak = sampleRss(pid, 50);
      const answers = new Map<string, number>();
      for (let i = 0; i < INPUTS; i++) {
        const answer = await test.send(gateway.url, i);
        answers.set(answer, (answers.get(answer) ?? 0) + 1);
      }
      await pause(3000);
      const after = treeRssMiB(pid);
      const highest = Math.max(peak.stop(), after);
      const outcome = [...answers].map(([answer, count]) => `${count} × ${answer}`).join(', ');
      rows.push(
        `| ${test.name} | ${outcome} | ${before.toFixed(0)} | ${highest.toFixed(0)} | ${after.toFixed(0)} | ${(after - before).toFixed(0)} |`,
      );
      console.error(`${test.name}: done`);
    } finally {
      await stop(gateway.child);
    }
  }
} finally {
  await stop(emulator.child);
}

console.log(`### Large inputs (${machine()})

${INPUTS} inputs of 5 MB each, one after the other, against a fresh gateway per case; RSS in MiB
of the gateway's process tree.

| case | answers | RSS before | peak | 3 s after | growth |
|---|---|---|---|---|---|
${rows.join('\n')}

Reproduce: \`npm run bench -- hostile-inputs\`
`);

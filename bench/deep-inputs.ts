import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, fetch } from 'undici';
import WebSocket from 'ws';
import { loadConfig } from '../src/config/environment.ts';
import { startEmulator } from '../src/emulator/server.ts';
import { createGateway } from '../src/gateway.ts';
import { machine, median, RUNS } from './lib.ts';

/**
 * `npm run bench -- deep-inputs`: how fast variables and extensions 4096 deep and 100,000 wide are
 * refused by MAX_INPUT_DEPTH and MAX_INPUT_NODES (goal: under 50 ms each, no upstream call), on
 * each door: HTTP POST and SSE over a real port (from the send to the whole answer), GET in process
 * (yoga.fetch: over a port, Node answers a URL past 16 KiB with 431 before the gateway sees it),
 * graphql-ws over a real port (from the send to the `error` message). MAX_REQUEST_BYTES
 * is 8 MiB here, so that the 1.5 MB object of 100,000 keys is read at all (at the default 1 MiB it
 * is a 413 before its first byte). Each input sent once to warm up, then 20 times per run; RUNS runs.
 */
const SENDS = 20;
const deep = (levels: number) => `${'['.repeat(levels)}1${']'.repeat(levels)}`;
const wideArray = (n: number) => `[${new Array(n).fill(0).join(',')}]`;
const wideObject = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`;
const QUERY = 'query ($eventIds: [Int!]!) { events(eventIds: $eventIds) { name } }';
const CASES: { name: string; variables: string; extensions?: string }[] = [
  { name: 'variables 4096 deep', variables: `{"eventIds": [5001], "v": ${deep(4096)}}` },
  { name: 'variables: an array of 100,000', variables: `{"eventIds": [5001], "v": ${wideArray(100_000)}}` },
  { name: 'variables: an object of 100,000 keys', variables: `{"eventIds": [5001], "v": ${wideObject(100_000)}}` },
  { name: 'extensions 4096 deep', variables: '{"eventIds": [5001]}', extensions: `{"x": ${deep(4096)}}` },
  { name: 'extensions: an array of 100,000', variables: '{"eventIds": [5001]}', extensions: wideArray(100_000) },
];

const emulator = await startEmulator({ port: 0, rateLimit: false });
const gateway = createGateway({
  ...loadConfig({ LOG_LEVEL: 'silent', MAX_REQUEST_BYTES: String(8 * 1024 * 1024) }),
  upstreamBaseUrl: emulator.url,
});
const server = createServer(gateway.yoga);
const sockets = gateway.acceptWebSockets(server);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

const body = (c: (typeof CASES)[number]) =>
  `{"query": ${JSON.stringify(QUERY)}, "variables": ${c.variables}${c.extensions ? `, "extensions": ${c.extensions}` : ''}}`;
// A connection of its own for each send: the GET door (in process) blocks the event loop for
// seconds, after which a kept-alive connection may be closed by the server as it is reused.
const post = async (c: (typeof CASES)[number], accept: string) => {
  const dispatcher = new Agent();
  try {
    return await answered(
      await fetch(`http://127.0.0.1:${port}/graphql`, {
        dispatcher,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept },
        body: body(c),
      }),
    );
  } finally {
    await dispatcher.close();
  }
};
const answered = async (res: { status: number; text(): Promise<string> }) =>
  `${res.status} ${/"limit":"(\w+)"/.exec(await res.text())?.[1]}`;

/** A graphql-ws connection, acknowledged; a message past a bound over 16 KiB closes it, so it is opened again. */
let socket: WebSocket | undefined;
async function connected(): Promise<WebSocket> {
  if (socket?.readyState === WebSocket.OPEN) return socket;
  const opened = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws');
  await new Promise((resolve) => opened.once('open', resolve));
  opened.send(JSON.stringify({ type: 'connection_init' }));
  await new Promise((resolve) => opened.once('message', resolve));
  socket = opened;
  return opened;
}
let operations = 0;
/** The last graphql-ws send's time, without reconnecting (a closed socket is opened again before the send). */
let wsMs = 0;

const DOORS: Record<string, (c: (typeof CASES)[number]) => Promise<string>> = {
  POST: (c) => post(c, 'application/json'),
  GET: async (c) => {
    const search = new URLSearchParams({
      query: QUERY,
      variables: c.variables,
      ...(c.extensions ? { extensions: c.extensions } : {}),
    });
    return answered(
      await gateway.yoga.fetch(`http://yoga/graphql?${search}`, {
        headers: { accept: 'application/json', 'graphql-preflight': '1' },
      }),
    );
  },
  SSE: (c) => post(c, 'text/event-stream'),
  // Timed from the send to the operation's `error`, or to the close (4400) of a large message.
  'graphql-ws': async (c) => {
    const ws = await connected();
    const id = String(++operations);
    const text = `{"id": "${id}", "type": "subscribe", "payload": ${body(c)}}`;
    const start = performance.now();
    const answer = await new Promise<string>((resolve) => {
      const closed = (code: number, reason: Buffer) =>
        resolve(`close ${code} ${/\((\w+)\)/.exec(String(reason))?.[1]}`);
      const listener = (data: Buffer) => {
        const message = JSON.parse(data.toString()) as { id?: string; type: string; payload?: unknown };
        if (message.id !== id) return;
        ws.off('message', listener);
        ws.off('close', closed);
        resolve(`${message.type} ${/"limit":"(\w+)"/.exec(JSON.stringify(message.payload))?.[1]}`);
      };
      ws.on('message', listener);
      ws.once('close', closed);
      ws.send(text);
    });
    wsMs = performance.now() - start;
    return answer;
  },
};

console.log(`Refusal of deep and wide inputs (${machine()}); ${RUNS} runs of ${SENDS} sends\n`);
console.log('| input | door | answer | median ms | slowest ms | upstream calls |');
console.log('|---|---|---|---|---|---|');
for (const c of CASES) {
  for (const [door, send] of Object.entries(DOORS)) {
    emulator.state.log = [];
    const answer = await send(c);
    const runMedians: number[] = [];
    let slowest = 0;
    for (let run = 0; run < RUNS; run++) {
      const times: number[] = [];
      for (let i = 0; i < SENDS; i++) {
        const start = performance.now();
        await send(c);
        times.push(door === 'graphql-ws' ? wsMs : performance.now() - start);
      }
      runMedians.push(median(times));
      slowest = Math.max(slowest, ...times);
    }
    console.log(
      `| ${c.name} | ${door} | ${answer} | ${median(runMedians).toFixed(1)} | ${slowest.toFixed(1)} | ${emulator.state.log.length} |`,
    );
  }
}
socket?.close();
await sockets.close();
server.closeAllConnections();
await new Promise((resolve) => server.close(resolve));
await gateway.close();
await emulator.close();

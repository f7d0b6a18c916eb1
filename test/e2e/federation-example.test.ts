import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../examples/federation/hive-gateway.ts';
import { until } from '../helpers/subscriptions.ts';

/**
 * `npm run example:federation` as a user runs it (docs/federating.md): Hive Gateway in front of this
 * gateway with demand control at QUERY_MAX_UPSTREAM_CALLS, every request to our subgraph signed, and
 * subscriptions through router callbacks, all at once. What the example prints is what is used.
 */

let child: ChildProcess;
let output = '';
const urls: Record<'emulator' | 'reservations' | 'hive', string> = { emulator: '', reservations: '', hive: '' };

beforeAll(async () => {
  const port = await freePort();
  child = spawn(process.execPath, ['--import', 'tsx', 'examples/federation/run.ts'], {
    env: { ...process.env, FEDERATION_PORT: String(port), CHANGES_POLL_INTERVAL_MS: '1000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await until(() => output.includes('Ctrl-C stops everything') || child.exitCode !== null, 60_000);
  expect(child.exitCode, output).toBeNull();
  urls.emulator = /^emulator\s+(\S+)/m.exec(output)![1]!;
  urls.reservations = /^reservations subgraph\s+(\S+)/m.exec(output)![1]!;
  urls.hive = /^Hive Gateway\s+(\S+)/m.exec(output)![1]!;
}, 90_000);
afterAll(async () => {
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
});

const post = async (url: string, query: string) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query }),
  });
  return {
    status: res.status,
    body: (await res.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] },
  };
};
const upstreamCalls = async () =>
  ((await (await fetch(`${urls.emulator}/_emulator/requests`)).json()) as { requests: unknown[] }).requests.length;

describe('npm run example:federation', () => {
  it('answers the query it prints, through the router', async () => {
    const printed = /-d '(\{"query".*\})'/.exec(output)![1]!;
    const { body } = await post(urls.hive, (JSON.parse(printed) as { query: string }).query);
    expect(body.errors).toBeUndefined();
    expect(body.data).toMatchObject({
      registrations: expect.arrayContaining([expect.objectContaining({ id: 'reg-1' })]),
    });
  });

  it('refuses at the router, without reaching us, an operation over QUERY_MAX_UPSTREAM_CALLS', async () => {
    const before = await upstreamCalls();
    const { body } = await post(
      urls.hive,
      '{ event(eventId: 5001) { reservations(first: 200) { edges { node { hotel { name } event { name } } } } } }',
    );
    expect(body.errors?.[0]?.extensions?.code).toBe('COST_ESTIMATED_TOO_EXPENSIVE');
    expect(await upstreamCalls()).toBe(before);
  });

  it('refuses a request sent straight to our subgraph, unsigned', async () => {
    const { status, body } = await post(urls.reservations, '{ event(eventId: 5001) { name } }');
    expect([status, body.errors?.[0]?.extensions?.code]).toEqual([401, 'UNAUTHENTICATED']);
  });

  it('delivers a booking to a subscriber through the router, by signed callbacks', async () => {
    const controller = new AbortController();
    const res = await fetch(urls.hive, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        query: 'subscription { reservationChanged(eventId: 5002) { kind reservation { reservationNumber } } }',
      }),
      signal: controller.signal,
    });
    let text = '';
    const reading = (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of res.body!) text += decoder.decode(chunk as Uint8Array, { stream: true });
      } catch {
        // aborted below
      }
    })();
    try {
      // Subscribed once the router has checked its callback with us and the feed has read the event.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const booked = (await (
        await fetch(`${urls.emulator}/_emulator/bookings`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ eventId: 5002 }),
        })
      ).json()) as { reservationNumber: number };
      await until(
        () => text.includes(`"reservationNumber":${booked.reservationNumber}`) || text.includes('"errors"'),
        20_000,
      );
      expect(text).not.toContain('"errors"');
      expect(text).toContain('"kind":"CREATED"');
    } finally {
      controller.abort();
      await reading;
    }
  }, 40_000);
});

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { vi } from 'vitest';
import { type Emulator, type EmulatorOptions, startEmulator } from '../../src/emulator/server.ts';
import type { UpstreamAccount } from '../../src/upstream/account.ts';
import { UpstreamClient, type UpstreamOptions } from '../../src/upstream/client.ts';

export const LICENSEE_1001: UpstreamAccount = { systemIdentifier: '1001', key: 'demo-key-1001', timeZone: 'UTC' };
export const LICENSEE_2002: UpstreamAccount = {
  systemIdentifier: '2002',
  key: 'demo-key-2002',
  timeZone: 'America/New_York',
};

export function clientFor(emulator: { url: string }, options: Partial<UpstreamOptions> = {}): UpstreamClient {
  return new UpstreamClient({
    baseUrl: emulator.url,
    userAgent: 'reservation-gateway/test',
    timeoutMs: 5_000,
    rateLimit: 240,
    rateWindowMs: 60_000,
    rateMargin: 0.05,
    ...options,
  });
}

export async function emulatorAndClient(
  emulatorOptions: EmulatorOptions = {},
  clientOptions: Partial<UpstreamOptions> = {},
) {
  const emulator = await startEmulator({ port: 0, ...emulatorOptions });
  return { emulator, client: clientFor(emulator, clientOptions) };
}

/** Calls the emulator's control surface over HTTP (/_emulator/…, docs/upstream.md). */
export async function control(emulator: Emulator, action: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${emulator.url}/_emulator/${action}`, {
    method: body === undefined && action === 'requests' ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? (action === 'requests' ? undefined : '{}') : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`/_emulator/${action} answered ${res.status}`);
  return res.json();
}

/** Requests of the emulator's log over HTTP, per endpoint. */
export async function requestsTo(emulator: Emulator, endpoint: string): Promise<{ status: number; at: string }[]> {
  const { requests } = (await control(emulator, 'requests')) as {
    requests: { endpoint: string; status: number; at: string }[];
  };
  return requests.filter((r) => r.endpoint === endpoint);
}

/** The emulator's request log, straight from its state. */
export function log(emulator: Emulator) {
  return emulator.state.log;
}

export function count(emulator: Emulator, endpoint: string): number {
  return emulator.state.log.filter((r) => r.endpoint === endpoint).length;
}

/** The largest number of logged requests of one licensee inside any window of `windowMs`. */
export function busiestWindow(emulator: Emulator, windowMs: number, licensee = '1001'): number {
  const times = emulator.state.log.filter((r) => r.licensee === licensee).map((r) => Date.parse(r.at));
  let most = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while (times[end]! - times[start]! >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}

/**
 * With vitest's fake timers on (`setTimeout`, `clearTimeout`, `Date`, made before the client):
 * moves the fake clock on in steps of 50 ms until `done` says so, each step letting the sockets'
 * events run, so that the client's backoffs pass as fast as the service answers.
 */
export async function clockUntil(done: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await done())) await vi.advanceTimersByTimeAsync(50);
}

/** `promise`, once `clockUntil` has moved the fake clock on until it settled. */
export async function onFakeClock<T>(promise: Promise<T>): Promise<T> {
  let settled = false;
  const noted = promise.finally(() => void (settled = true));
  noted.catch(() => undefined);
  await clockUntil(() => settled);
  return promise;
}

export async function settle<T>(promises: Promise<T>[]) {
  const results = await Promise.allSettled(promises);
  return {
    ok: results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<T>).value),
    errors: results
      .filter((r) => r.status === 'rejected')
      .map((r) => (r as PromiseRejectedResult).reason as Error & { code?: string }),
  };
}

export interface StubAnswer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface StubService {
  url: string;
  /** Endpoints of the requests received, in order. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A tiny stand-in for the service, for answers the emulator cannot give (a Retry-After of a day,
 * an error echoing a client's value). `answer` gets the endpoint and the n-th request to it (1-based).
 */
export async function startStub(answer: (endpoint: string, nth: number) => StubAnswer): Promise<StubService> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const endpoint = /\/api\/v\d+\/(\w+)/.exec(req.url ?? '')?.[1] ?? '';
      requests.push(endpoint);
      const { status, body, headers = {} } = answer(endpoint, requests.filter((e) => e === endpoint).length);
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(body === undefined ? '' : JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

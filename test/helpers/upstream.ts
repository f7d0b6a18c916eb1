import { startEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/server.ts';
import { UpstreamClient, type UpstreamOptions } from '../../src/upstream/client.ts';
import type { Licensee } from '../../src/upstream/licensee.ts';

export const LICENSEE_1001: Licensee = { id: '1001', key: 'demo-key-1001', timeZone: 'UTC' };
export const LICENSEE_2002: Licensee = { id: '2002', key: 'demo-key-2002', timeZone: 'America/New_York' };

export function clientFor(emulator: Emulator, options: Partial<UpstreamOptions> = {}): UpstreamClient {
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

export async function emulatorAndClient(emulatorOptions: EmulatorOptions = {}, clientOptions: Partial<UpstreamOptions> = {}) {
  const emulator = await startEmulator({ port: 0, ...emulatorOptions });
  return { emulator, client: clientFor(emulator, clientOptions) };
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

export async function settle<T>(promises: Promise<T>[]) {
  const results = await Promise.allSettled(promises);
  return {
    ok: results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<T>).value),
    errors: results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as Error & { code?: string }),
  };
}

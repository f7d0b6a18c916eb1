import { authenticate, type Started, startProcess, stop } from '../lib.ts';

/**
 * The emulator a system runs against, and the upstream calls read from its request log (never
 * estimated, docs/benchmarking.md). Each system-run gets a fresh emulator: its page cache, rate
 * window and bounded log then hold that system's traffic only.
 */

export interface LoggedRequest {
  at: string;
  endpoint: string;
  status: number;
}

export interface Emulator {
  url: string;
  started: Started;
  /** A token for direct REST calls (counts as one authenticate in the log). */
  token(): Promise<string>;
  /** Entries logged at or after `since` (ms since epoch), oldest first. */
  requestsSince(since: number): Promise<LoggedRequest[]>;
  close(): Promise<void>;
}

/** With `benchLicensees`, the emulator of bench/compare/licensees-emulator.ts (no rate limit) with that many licensees more. */
export async function startEmulator({
  rateLimit,
  benchLicensees,
}: {
  rateLimit: boolean;
  benchLicensees?: number;
}): Promise<Emulator> {
  const started = benchLicensees
    ? await startProcess('bench/compare/licensees-emulator.ts', ['--licensees', String(benchLicensees)])
    : await startProcess('src/emulator/main.ts', ['--port', '0', ...(rateLimit ? [] : ['--no-rate-limit'])]);
  const url = started.url;
  let token: Promise<string> | undefined;
  return {
    url,
    started,
    token: () => (token ??= authenticate(url)),
    async requestsSince(since) {
      const { requests } = (await (await fetch(`${url}/_emulator/requests`)).json()) as { requests: LoggedRequest[] };
      return requests.filter((r) => Date.parse(r.at) >= since);
    },
    close: () => stop(started.child),
  };
}

/** Calls to the service, 429 answers apart (those are counted on their own). */
export const served = (log: readonly LoggedRequest[]) => log.filter((r) => r.status !== 429).length;
export const refused429 = (log: readonly LoggedRequest[]) => log.filter((r) => r.status === 429).length;

/** The most requests the service processed within any 60 s, from the log's timestamps. */
export function busiestMinute(log: readonly LoggedRequest[]): number {
  const times = log.filter((r) => r.status !== 429).map((r) => Date.parse(r.at));
  let best = 0;
  for (let start = 0, end = 0; end < times.length; end++) {
    while (times[end]! - times[start]! >= 60_000) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

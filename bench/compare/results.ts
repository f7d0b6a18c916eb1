import type { SystemName } from './systems.ts';

/** What one compare run gathers: per scenario and system, one value per run (median and range later). */

export interface LoadCell {
  coldCalls: number[];
  /** Upstream calls during the measured load, divided by the requests completed. */
  loadCalls: number[];
  rps10: number[];
  p50at10: number[];
  p99at10: number[];
  rps50: number[];
  p50at50: number[];
  p99at50: number[];
  idleRss: number[];
  peakRss: number[];
  startupMs: number[];
  /** The system's CPU time (its process tree, from /proc) during the measured part, divided by the answers. */
  cpuMsPerAnswer10: number[];
  cpuMsPerAnswer50: number[];
  upstream429: number;
  /** Non-2xx answers, socket errors and GraphQL errors other than RATE_LIMITED. */
  clientErrors: number;
  rateLimited: number;
}

export interface WalkCell {
  ms: number[];
  calls: number[];
  records: number[];
  peakRss: number[];
}

export interface StreamCell {
  firstRecordMs: number[];
  totalMs: number[];
  records: number[];
  /** Set when the system answered the streamed query with an error (no @stream yet). */
  unsupported?: string;
}

/** What S6 and S7 record alike of each run of their simulated users. */
interface UsersCell {
  operations: number[];
  rateLimited: number[];
  rateLimitedWithoutRetryAfter: number[];
  otherErrors: number[];
  serverErrors: number[];
  p95: number[];
  calls: number[];
  upstream429: number[];
  busiestMinute: number[];
}

export interface SessionCell extends UsersCell {
  served: number[];
}

/** S7: answers with data are fresh or marked stale (`extensions.stale`), counted apart. */
export interface TableCell extends UsersCell {
  fresh: number[];
  stale: number[];
}

export type BySystem<T> = Partial<Record<SystemName, T>>;

export interface Results {
  runs: number;
  /** Scenario id → system → cell. */
  load: Record<string, BySystem<LoadCell>>;
  walk: BySystem<WalkCell>;
  stream: StreamCell | null;
  sessions: BySystem<SessionCell>;
  tables: BySystem<TableCell>;
  /** os.loadavg() at the start and end of each run. */
  loadavg: number[][];
  settings: {
    durationS: number;
    warmupS: number;
    s6Seconds: number;
    s6Users: number;
    s7Seconds: number;
    s7Users: number;
  };
}

export const emptyLoadCell = (): LoadCell => ({
  coldCalls: [],
  loadCalls: [],
  rps10: [],
  p50at10: [],
  p99at10: [],
  rps50: [],
  p50at50: [],
  p99at50: [],
  idleRss: [],
  peakRss: [],
  startupMs: [],
  cpuMsPerAnswer10: [],
  cpuMsPerAnswer50: [],
  upstream429: 0,
  clientErrors: 0,
  rateLimited: 0,
});

export const emptyWalkCell = (): WalkCell => ({ ms: [], calls: [], records: [], peakRss: [] });
const emptyUsersCell = (): UsersCell => ({
  operations: [],
  rateLimited: [],
  rateLimitedWithoutRetryAfter: [],
  otherErrors: [],
  serverErrors: [],
  p95: [],
  calls: [],
  upstream429: [],
  busiestMinute: [],
});

export const emptySessionCell = (): SessionCell => ({ ...emptyUsersCell(), served: [] });

export const emptyTableCell = (): TableCell => ({ ...emptyUsersCell(), fresh: [], stale: [] });

export function emptyResults(settings: Results['settings']): Results {
  return { runs: 0, load: {}, walk: {}, stream: null, sessions: {}, tables: {}, loadavg: [], settings };
}

import autocannon from 'autocannon';
import { DURATION_S, WARMUP_S } from '../lib.ts';
import { count, noOutcomes, type OutcomeCounts } from './outcome.ts';

/** What autocannon sends: one URL, fixed headers, and the bodies it cycles through (one per request). */
export interface Target {
  url: string;
  headers: Record<string, string>;
  bodies: readonly string[];
}

export interface LoadFigures {
  rps: number;
  p50: number;
  p99: number;
  /** Requests completed in the measured part (not the warm-up). */
  requests: number;
  outcomes: OutcomeCounts;
  /** Socket errors and timeouts. */
  socketErrors: number;
}

/**
 * One measurement as docs/benchmarking.md fixes it: a warm-up, then DURATION_S seconds, keep-alive
 * on, no pipelining. Every answer's body is classified, so GraphQL errors in 200 answers count.
 * With several bodies, each request takes the next one, across all connections (S4b: a different
 * page per request, so in-flight sharing cannot hide the per-page cost).
 */
export async function measure(target: Target, connections: number, onMeasuredStart?: () => void): Promise<LoadFigures> {
  await run(target, connections, WARMUP_S, noOutcomes());
  onMeasuredStart?.();
  const outcomes = noOutcomes();
  const r = await run(target, connections, DURATION_S, outcomes);
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    requests: r.requests.total,
    outcomes,
    socketErrors: r.errors + r.timeouts,
  };
}

/**
 * Exactly `amount` requests over `connections` connections, every one answered before it returns:
 * the upstream calls made meanwhile, divided by `amount`, are the calls per operation under load
 * (a timed run abandons the requests in flight when it stops, whose calls would count for nothing).
 */
export async function fixedAmount(target: Target, connections: number, amount: number): Promise<number> {
  const r = await run(target, connections, { amount }, noOutcomes());
  return r.requests.total;
}

function run(
  target: Target,
  connections: number,
  length: number | { amount: number },
  outcomes: OutcomeCounts,
): Promise<autocannon.Result> {
  let next = 0;
  const bodies = target.bodies;
  return autocannon({
    url: target.url,
    method: 'POST',
    headers: target.headers,
    connections,
    ...(typeof length === 'number' ? { duration: length } : length),
    requests: [
      {
        method: 'POST',
        body: bodies[0],
        ...(bodies.length > 1
          ? { setupRequest: (req: autocannon.Request) => ({ ...req, body: bodies[next++ % bodies.length] }) }
          : {}),
        onResponse: (status: number, body: string) => count(outcomes, status, body),
      },
    ],
  });
}

import { z } from 'zod';

/**
 * Apollo's HTTP callback protocol for GraphQL subscriptions, version 1.0 (Apollo Router's docs,
 * "HTTP Callback Protocol for GraphQL Subscriptions"): a router sends the subscription as a POST
 * with `Accept: application/json;callbackSpec=1.0` and `extensions.subscription`; the subgraph
 * checks the callback URL (`check`, answered 204), answers `{"data": null}`, then POSTs each result
 * (`next`), a `check` every `heartbeatIntervalMs`, and `complete` at the end. A 404 to any of them
 * means the router has forgotten the subscription: stop.
 */

/** The header every callback carries, naming the protocol's version. */
export const PROTOCOL_HEADER = { 'subscription-protocol': 'callback/1.0' } as const;

/** Heartbeats asked more often than this are refused: a router could otherwise make us call it in a loop. */
export const SHORTEST_HEARTBEAT_MS = 1_000;

/** Whether a request asks for a callback subscription (its Accept names the protocol's version). */
export function asksForCallbacks(request: Request): boolean {
  return /callbackspec=1\.0/i.test(request.headers.get('accept') ?? '');
}

/** What a router gives in `extensions.subscription`. */
export interface CallbackTarget {
  callbackUrl: string;
  subscriptionId: string;
  verifier: string;
  /** 0: no heartbeat. */
  heartbeatIntervalMs: number;
}

const target = z.object({
  callbackUrl: z.string('must be a URL').min(1).max(2048, 'must be at most 2048 characters'),
  subscriptionId: z.string('must be a string').min(1).max(256, 'must be at most 256 characters'),
  verifier: z.string('must be a string').min(1).max(1024, 'must be at most 1024 characters'),
  heartbeatIntervalMs: z.coerce
    .number('must be a number of ms')
    .int('must be a whole number of ms')
    .refine(
      (ms) => ms === 0 || (ms >= SHORTEST_HEARTBEAT_MS && ms <= 3_600_000),
      `must be 0 (no heartbeat) or from ${SHORTEST_HEARTBEAT_MS} to 3600000`,
    )
    .default(5_000),
});

/** The router's `extensions.subscription`, or every problem with it in one sentence. */
export function readTarget(extension: unknown): { target: CallbackTarget } | { problem: string } {
  const parsed = target.safeParse(extension);
  if (parsed.success) return { target: parsed.data };
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'subscription'}: ${issue.message}`);
  return { problem: `extensions.subscription: ${problems.join('; ')}` };
}

export type CallbackMessage =
  | { kind: 'subscription'; action: 'check'; id: string; verifier: string }
  | { kind: 'subscription'; action: 'next'; id: string; verifier: string; payload: unknown }
  | { kind: 'subscription'; action: 'complete'; id: string; verifier: string; errors?: unknown[] };

export const checkMessage = ({ subscriptionId: id, verifier }: CallbackTarget): CallbackMessage => ({
  kind: 'subscription',
  action: 'check',
  id,
  verifier,
});

export const nextMessage = ({ subscriptionId: id, verifier }: CallbackTarget, payload: unknown): CallbackMessage => ({
  kind: 'subscription',
  action: 'next',
  id,
  verifier,
  payload,
});

export const completeMessage = (
  { subscriptionId: id, verifier }: CallbackTarget,
  errors?: readonly unknown[],
): CallbackMessage => ({
  kind: 'subscription',
  action: 'complete',
  id,
  verifier,
  ...(errors?.length ? { errors: [...errors] } : {}),
});

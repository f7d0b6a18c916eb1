/**
 * When a webhook is tried again, and what an answer means. The schedule is the one Standard
 * Webhooks' implementations (Svix) publish: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * 14 h, 20 h and 24 h after the attempt before, each pause stretched by up to a tenth at random so
 * that endpoints failing together are not all tried again in the same second.
 */

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** The pause before each attempt (the first is immediate): 10 attempts over about 3 days. */
export const RETRY_SCHEDULE_MS: readonly number[] = [
  0,
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  14 * HOUR,
  20 * HOUR,
  24 * HOUR,
];

/** The most a receiver's Retry-After can push an attempt back. */
export const MAX_RETRY_AFTER_MS = 24 * HOUR;

/** Up to this share of a pause is added at random. */
const JITTER = 0.1;

/**
 * The pause before attempt number `attempt` (0-based; the first is 0), jittered; undefined when
 * the schedule has no more attempts. `random` is in [0, 1).
 */
export function pauseBefore(
  attempt: number,
  random: () => number = Math.random,
  schedule: readonly number[] = RETRY_SCHEDULE_MS,
): number | undefined {
  const pause = schedule[attempt];
  if (pause === undefined) return undefined;
  return Math.round(pause * (1 + JITTER * random()));
}

/**
 * A Retry-After header (delay-seconds or an HTTP date, RFC 9110 §10.2.3) as ms from `now`; undefined
 * when absent or unreadable. Capped at MAX_RETRY_AFTER_MS, never negative.
 */
export function retryAfterMs(header: string | undefined, now: number): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * SECOND;
  else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS);
}

/** What an attempt's answer means: delivered, to be tried again (later), or the endpoint is gone (410: disable it). */
export type AttemptVerdict = 'delivered' | 'retry' | 'gone';

/** 2xx delivers; 410 is an endpoint gone; anything else (a 3xx too: redirects are not followed) is a failure. */
export function verdictOf(status: number): AttemptVerdict {
  if (status >= 200 && status < 300) return 'delivered';
  if (status === 410) return 'gone';
  return 'retry';
}

/** Whether a status's Retry-After is honoured (429 Too Many Requests, 503 Service Unavailable). */
export const honoursRetryAfter = (status: number) => status === 429 || status === 503;

/**
 * What a client got from one GraphQL (or REST) answer: data, RATE_LIMITED (counted apart: the
 * budget's refusal is an answer, not a fault), or an error. Peers have no RATE_LIMITED code: their
 * upstream 429s surface as errors naming it, and count as RATE_LIMITED too.
 */
export type Outcome = 'ok' | 'rate-limited' | 'error' | 'server-error';

export function outcomeOf(status: number, body: string): Outcome {
  if (status >= 500) return 'server-error';
  if (status === 429) return 'rate-limited';
  if (status < 200 || status >= 300) return 'error';
  // A GraphQL answer with errors; REST answers carry "error" (the service's own body).
  if (!body.includes('"errors"') && !body.startsWith('{"error"')) return 'ok';
  return /RATE_LIMITED|\b429\b/.test(body) ? 'rate-limited' : 'error';
}

export interface OutcomeCounts {
  ok: number;
  rateLimited: number;
  /** RATE_LIMITED answers that do not say when to come back (each should carry retryAfterSeconds). */
  rateLimitedWithoutRetryAfter: number;
  errors: number;
  serverErrors: number;
}

export const noOutcomes = (): OutcomeCounts => ({
  ok: 0,
  rateLimited: 0,
  rateLimitedWithoutRetryAfter: 0,
  errors: 0,
  serverErrors: 0,
});

/** Classifies one answer and counts it. */
export function count(counts: OutcomeCounts, status: number, body: string): void {
  const outcome = outcomeOf(status, body);
  if (outcome === 'ok') counts.ok++;
  else if (outcome === 'rate-limited') {
    counts.rateLimited++;
    if (!body.includes('"retryAfterSeconds"')) counts.rateLimitedWithoutRetryAfter++;
  } else if (outcome === 'server-error') counts.serverErrors++;
  else counts.errors++;
}

/**
 * True when an answer says it was served from a held copy of a page (`extensions.stale: [{ path,
 * ageSeconds }]`) because the budget had no slot for a fresh read: data, but not fresh.
 */
export function staleMarked(body: string): boolean {
  if (!body.includes('"stale"')) return false;
  try {
    const stale = (JSON.parse(body) as { extensions?: { stale?: unknown } }).extensions?.stale;
    return Array.isArray(stale) && stale.length > 0;
  } catch {
    return false;
  }
}

import { describe, expect, it } from 'vitest';
import { count, noOutcomes, outcomeOf, staleMarked } from '../../bench/compare/outcome.ts';

/** How the compare benchmark reads an answer: data, RATE_LIMITED (apart), an error, a server error. */
describe('compare outcomes', () => {
  it('tells data from GraphQL errors inside 200 answers', () => {
    expect(outcomeOf(200, '{"data":{"event":{"name":"x"}}}')).toBe('ok');
    expect(outcomeOf(200, '{"errors":[{"message":"boom"}],"data":null}')).toBe('error');
    expect(outcomeOf(200, '{"error":{"code":"NOT_FOUND"}}')).toBe('error'); // the REST service's own error body
  });

  it("counts RATE_LIMITED, and a peer's upstream 429, apart from other errors", () => {
    expect(
      outcomeOf(200, '{"errors":[{"message":"wait","extensions":{"code":"RATE_LIMITED","retryAfterSeconds":3}}]}'),
    ).toBe('rate-limited');
    expect(outcomeOf(200, '{"errors":[{"message":"getreservation failed: RATE_LIMITED"}]}')).toBe('rate-limited');
    expect(outcomeOf(429, '')).toBe('rate-limited');
    expect(outcomeOf(502, 'Bad gateway')).toBe('server-error');
    expect(outcomeOf(400, '{"errors":[]}')).toBe('error');
  });

  it('notes a RATE_LIMITED that does not say when to come back', () => {
    const counts = noOutcomes();
    count(counts, 200, '{"errors":[{"extensions":{"code":"RATE_LIMITED","retryAfterSeconds":3}}]}');
    count(counts, 200, '{"errors":[{"extensions":{"code":"RATE_LIMITED"}}]}');
    count(counts, 200, '{"data":{}}');
    expect(counts).toEqual({ ok: 1, rateLimited: 2, rateLimitedWithoutRetryAfter: 1, errors: 0, serverErrors: 0 });
  });

  it('tells an answer served from a held copy (extensions.stale) from a fresh one', () => {
    expect(
      staleMarked('{"data":{"event":{}},"extensions":{"stale":[{"path":["event","reservations"],"ageSeconds":42}]}}'),
    ).toBe(true);
    expect(staleMarked('{"data":{"event":{}}}')).toBe(false);
    expect(staleMarked('{"data":{"event":{}},"extensions":{"stale":[]}}')).toBe(false);
    // A field named stale in the data is no marker.
    expect(staleMarked('{"data":{"event":{"stale":true}}}')).toBe(false);
  });
});

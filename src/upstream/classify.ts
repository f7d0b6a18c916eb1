import { BrokenCircuitError } from 'cockatiel';
import type { UpstreamAccount } from './account.ts';
import type { UpstreamCall } from './call.ts';
import { schemasOf } from './endpoints.ts';
import {
  AttemptFailure,
  BadInputError,
  NotFoundError,
  RateLimitedError,
  TokenRejectedError,
  UpstreamError,
  UpstreamResponseError,
  UpstreamUnavailableError,
} from './errors.ts';
import type { RawAnswer } from './transport.ts';

/**
 * What an answer of the service means: the decoded value, or the failure it reports, classified
 * for the layers (AttemptFailure for retry and breaker, TokenRejectedError for the token layer,
 * an UpstreamError for what the caller gets). Keys and tokens never reach a message.
 */

/** The answer's decoded value, or throws the failure it reports. */
export function classifyAnswer(call: UpstreamCall, answer: RawAnswer, now: () => number = Date.now): unknown {
  const { status } = answer;
  const body = parseJson(answer.text);
  const problem = describeProblem(status, body);
  const rejection = call.token === undefined ? undefined : tokenRejection(status, body, problem);
  if (rejection === 'named') throw new TokenRejectedError(`${call.name}: token refused`);
  if (rejection === 'words')
    throw new TokenRejectedError(`${call.name}: token refused in words`, { refusal: refusal(call, status, problem!) });
  if (status === 429 || problem?.code === 'RATE_LIMITED') {
    throw new AttemptFailure('throttled', 'rate limited', {
      status: 429,
      retryAfterMs: retryAfterMs(answer.headers['retry-after'], now),
    });
  }
  if (status >= 500) throw new AttemptFailure('server', `status ${status}`, { status });
  if (problem) throw refusal(call, status, problem);
  if (status < 200 || status >= 300)
    throw new UpstreamResponseError(`the reservation service answered ${call.name} with status ${status}`, status);
  if (body === undefined) throw new AttemptFailure('malformed', 'body is not JSON', { status });
  const decoded = schemasOf(call.name, call.licensee).response.safeParse(body);
  if (!decoded.success) {
    throw new UpstreamResponseError(
      `the reservation service answered ${call.name} in an unexpected shape: ${decoded.error.issues[0]?.message ?? 'invalid'}`,
      status,
    );
  }
  return decoded.data;
}

/**
 * Whatever a call ended with, as the one taxonomy callers see. A failure the layers do not know (a
 * bug: a TypeError, a store that broke) passes as it is, so the server logs it with its stack and
 * answers INTERNAL_SERVER_ERROR, rather than hiding it as an upstream failure.
 */
export function toUpstreamError(
  error: unknown,
  call: Pick<UpstreamCall, 'name' | 'endpoint'>,
  rateWindowMs: number,
): unknown {
  if (error instanceof UpstreamError) return error;
  const { name } = call;
  if (error instanceof BrokenCircuitError)
    return new UpstreamUnavailableError('the reservation service is unavailable (circuit open); try again shortly');
  if (error instanceof TokenRejectedError)
    return error.wordsOnly?.refusal ?? new UpstreamResponseError('the reservation service refused a fresh token');
  if (error instanceof AttemptFailure) {
    if (error.kind === 'throttled')
      return new RateLimitedError(
        Math.max(1, Math.ceil(Math.min(error.retryAfterMs ?? rateWindowMs, rateWindowMs) / 1000)),
        'throttled',
      );
    if (error.kind === 'malformed')
      return new UpstreamResponseError(`the reservation service sent an unreadable answer to ${name}`, error.status);
    const doubt = error.maybeProcessed && !call.endpoint.idempotent ? ' (it may or may not have been applied)' : '';
    return new UpstreamUnavailableError(
      `the reservation service could not be reached for ${name}: ${error.message}${doubt}`,
      error.status,
    );
  }
  return error;
}

/** Retry-After in whole seconds or as an HTTP date (RFC 9110, 10.2.3) → ms; undefined when absent or unreadable. */
function retryAfterMs(header: string | string[] | undefined, now: () => number): number | undefined {
  const text = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now());
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

interface Problem {
  code?: string;
  message?: string;
  field?: string;
}

/**
 * The error a body reports, in any of the forms docs/upstream.md lists: `{"error": {…}}`,
 * `{"error": "…"}`, `{"success": false, …}`, `{"status": "error", …}`; for a non-2xx status without
 * a readable body, a problem named after the status.
 */
function describeProblem(status: number, body: unknown): Problem | undefined {
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const fields = body as Record<string, unknown>;
    const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
    if (fields.error && typeof fields.error === 'object') {
      const error = fields.error as Record<string, unknown>;
      return { code: text(error.code), message: text(error.message), field: text(error.field) };
    }
    if (typeof fields.error === 'string')
      return { code: text(fields.code), message: fields.error, field: text(fields.field) };
    if (fields.success === false || fields.status === 'error')
      return { code: text(fields.code), message: text(fields.message), field: text(fields.field) };
  }
  if (status >= 400) return { message: `status ${status}` };
  return undefined;
}

const TOKEN_CODES = new Set(['INVALID_TOKEN', 'TOKEN_EXPIRED']);
const TOKEN_WORDS = /token/i;
const TOKEN_PROBLEM = /(invalid|expired|unknown|malformed|revoked)/i;

/**
 * Token rejections come in many forms (docs/upstream.md, "Variations of the real service the
 * gateway tolerates"). `named`: a code of the service's own,
 * an error naming the `token` field, or a bare 401 (no readable body) to a call that carried a
 * token, at the statuses the service uses for them. `words`: at any status that is no throttling
 * or fault, a message (or code) calling the token invalid, expired or unknown; such a message may
 * echo a client's value: the token layer renews for it once and learns when it was (token-echoes.ts).
 */
function tokenRejection(status: number, body: unknown, problem: Problem | undefined): 'named' | 'words' | undefined {
  if (!problem) return undefined;
  if ([200, 400, 401, 403].includes(status)) {
    if (problem.code !== undefined && TOKEN_CODES.has(problem.code)) return 'named';
    if (problem.field === 'token') return 'named';
    if (status === 401 && body === undefined) return 'named';
  }
  if (status === 429 || status >= 500 || problem.code === 'RATE_LIMITED') return undefined;
  const words = `${problem.code ?? ''} ${problem.message ?? ''}`;
  return TOKEN_WORDS.test(words) && TOKEN_PROBLEM.test(words) ? 'words' : undefined;
}

/** A refusal the service meant: mapped to the taxonomy, with its message cleaned of secrets. */
function refusal(call: UpstreamCall, status: number, problem: Problem): UpstreamError {
  const { name, licensee } = call;
  const message = clean(problem.message ?? `status ${status}`, licensee, call.token);
  const code = problem.code ?? '';
  if (name === 'authenticate' && (status === 401 || code === 'INVALID_CREDENTIALS')) {
    return new UpstreamResponseError(
      `the reservation service refused the gateway's credentials for licensee ${licensee.systemIdentifier}`,
      status,
      code,
    );
  }
  if (status === 404 || code === 'NOT_FOUND') return new NotFoundError(message, problem.field);
  if (status === 400 || code === 'MISSING_PARAMETER' || code === 'INVALID_PARAMETER')
    return new BadInputError(message, problem.field, status);
  if (status === 410 || code === 'FEATURE_UNAVAILABLE')
    return new UpstreamResponseError(`${name} is unavailable upstream: ${message}`, status, code);
  return new UpstreamResponseError(`the reservation service refused ${name}: ${message}`, status, code);
}

/**
 * Upstream messages are passed on to clients: never with the key, a token or a URL in them. The
 * exact key and token, raw or URL-encoded, go first: a token may hold `+ / = .` or be short, which
 * the length pattern (the backstop for secrets we do not know, such as another call's token) misses.
 */
function clean(message: string, licensee: UpstreamAccount, token: string | undefined): string {
  let cleaned = message;
  for (const [secret, label] of [
    [licensee.key, '[key]'],
    [token, '[token]'],
  ] as const) {
    if (!secret) continue;
    for (const form of new Set([secret, encodeURIComponent(secret)])) cleaned = cleaned.split(form).join(label);
  }
  return cleaned
    .replace(/https?:\/\/\S+/g, '[url]')
    .replace(/[A-Za-z0-9_-]{24,}/g, '[redacted]')
    .slice(0, 300);
}

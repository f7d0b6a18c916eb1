import { ErrorCode } from '../error-codes.ts';

/**
 * The one taxonomy of failures of the upstream layer. Each code is one of the GraphQL contract's
 * error codes (error-codes.ts), so the server maps them one to one. Messages never carry a URL, a
 * key or a token.
 */
export type UpstreamErrorCode = (typeof ErrorCode)[
  | 'BAD_USER_INPUT'
  | 'NOT_FOUND'
  | 'RATE_LIMITED'
  | 'UPSTREAM_UNAVAILABLE'
  | 'UPSTREAM_ERROR'];

export class UpstreamError extends Error {
  override name = 'UpstreamError';
  constructor(
    readonly code: UpstreamErrorCode,
    message: string,
    readonly details: { field?: string; status?: number; upstreamCode?: string; retryAfterSeconds?: number } = {},
  ) {
    super(message);
  }
}

/** The caller's input is invalid (checked before any call), or upstream refused one of its parameters. */
export class BadInputError extends UpstreamError {
  override name = 'BadInputError';
  constructor(message: string, field?: string, status?: number) {
    super(ErrorCode.BAD_USER_INPUT, message, { field, status });
  }
}

/**
 * A parameter the endpoint table refuses, found before any call. `path` is where in the
 * parameters, `reason` what is wrong: the resolvers map the path to the client's input path.
 */
export class InvalidParamsError extends BadInputError {
  override name = 'InvalidParamsError';
  constructor(
    readonly path: readonly (string | number)[],
    readonly reason: string,
  ) {
    super(
      path.length > 0 ? `${path.join('.')}: ${reason}` : reason,
      path[0] === undefined ? undefined : String(path[0]),
    );
  }
}

export class NotFoundError extends UpstreamError {
  override name = 'NotFoundError';
  constructor(message: string, field?: string) {
    super(ErrorCode.NOT_FOUND, message, { field, status: 404 });
  }
}

/**
 * Why a call was refused for the budget, for operators' logs (never shown to a client): the service
 * answered 429, the slot could not come before the deadline (refused at once), the deadline passed
 * while it waited, or a read-ahead found no free slot.
 */
export type RateLimitedWhy = 'throttled' | 'hopeless' | 'deadline' | 'no-headroom';

/** The licensee's budget could not serve the call before its deadline. */
export class RateLimitedError extends UpstreamError {
  override name = 'RateLimitedError';
  constructor(
    readonly retryAfterSeconds: number,
    readonly why?: RateLimitedWhy,
  ) {
    super(ErrorCode.RATE_LIMITED, `the upstream request budget is spent; retry after ${retryAfterSeconds} s`, {
      retryAfterSeconds,
    });
  }
}

/** Network failure, timeout, 5xx, open circuit: the service could not be reached or answer. */
export class UpstreamUnavailableError extends UpstreamError {
  override name = 'UpstreamUnavailableError';
  constructor(message: string, status?: number) {
    super(ErrorCode.UPSTREAM_UNAVAILABLE, message, { status });
  }
}

/** Upstream answered in a way the gateway cannot use, or refused the gateway's own credentials. */
export class UpstreamResponseError extends UpstreamError {
  override name = 'UpstreamResponseError';
  constructor(message: string, status?: number, upstreamCode?: string) {
    super(ErrorCode.UPSTREAM_ERROR, message, { status, upstreamCode });
  }
}

/*
 * Failures inside the call path, never shown to a client: classify.ts turns each into an
 * UpstreamError once the layers are done with it.
 */

export interface AttemptFailureDetails {
  status?: number;
  /** Whether the service may have acted on the request (so a create could be doubled). */
  maybeProcessed?: boolean;
  /** A 429's Retry-After in ms; undefined when the 429 did not say. */
  retryAfterMs?: number;
}

/** One failed attempt at an upstream call, classified for the retry and breaker policies. */
export class AttemptFailure extends Error {
  override name = 'AttemptFailure';
  readonly status?: number;
  readonly maybeProcessed: boolean;
  readonly retryAfterMs?: number;

  constructor(
    readonly kind: 'network' | 'timeout' | 'server' | 'malformed' | 'throttled',
    message: string,
    details: AttemptFailureDetails = {},
  ) {
    super(message);
    this.status = details.status;
    this.maybeProcessed = details.maybeProcessed ?? kind !== 'throttled';
    this.retryAfterMs = details.retryAfterMs;
  }
}

/**
 * The service refused the token a call carried; the token layer authenticates again. `wordsOnly`:
 * only the answer's message said so, and it may echo a client's value: `refusal` is what the
 * answer means if it was not about the token.
 */
export class TokenRejectedError extends Error {
  override name = 'TokenRejectedError';
  constructor(
    message: string,
    readonly wordsOnly?: { refusal: UpstreamError },
  ) {
    super(message);
  }
}

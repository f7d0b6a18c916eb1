import { BrokenCircuitError, type IPolicy } from 'cockatiel';
import { Pool } from 'undici';
import type { z } from 'zod';
import { MemoryCacheStore, stableKey, type CacheStore } from './cache.ts';
import { ENDPOINTS, versionOf, type CodecContext, type EndpointDef, type EndpointName, type ParamsOf, type ResultOf } from './endpoints.ts';
import {
  BadInputError,
  NotFoundError,
  RateLimitedError,
  UpstreamError,
  UpstreamResponseError,
  UpstreamUnavailableError,
} from './errors.ts';
import type { Licensee } from './licensee.ts';
import { RateBudget, type BudgetStore } from './rate-limit.ts';
import { AttemptFailure, createBreaker, createRetry } from './retry.ts';
import { TokenManager, type TokenStore } from './tokens.ts';

export interface UpstreamOptions {
  /** The service, without /api/… */
  baseUrl: string;
  userAgent: string;
  /** Per-attempt timeout for connect, headers and body. */
  timeoutMs: number;
  rateLimit: number;
  rateWindowMs: number;
  rateMargin: number;
  /** How long a call may wait for the budget and retries before it gives up. */
  deadlineMs?: number;
  /** Retries after the first attempt of an idempotent call. */
  maxRetries?: number;
  halfOpenAfterMs?: number;
  stores?: { budget?: BudgetStore; tokens?: TokenStore; cache?: CacheStore };
  logger?: { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };
}

export interface CallOptions {
  /** Absolute time (ms since epoch) by which the call must have started; default now + deadlineMs. */
  deadline?: number;
}

type Row = EndpointDef<z.ZodType, z.ZodType>;

const TOKEN_WORDS = /token/i;
const TOKEN_PROBLEM = /(invalid|expired|unknown|malformed|revoked)/i;

/**
 * The one way the gateway calls the REST service: `call(licensee, endpoint, params)`. It checks
 * and encodes the parameters, picks the version, holds the licensee's token, keeps the rate budget,
 * retries what is safe to retry behind a breaker, caches, decodes and validates the answer, and
 * turns every failure into one UpstreamError. Keys and tokens never leave this module.
 */
export class UpstreamClient {
  readonly budget: RateBudget;
  readonly tokens: TokenManager;
  private readonly pool: Pool;
  private readonly origin: URL;
  private readonly cache: CacheStore;
  private readonly breaker: IPolicy;
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly schemas = new Map<string, { params: z.ZodType; response: z.ZodType }>();
  private lastSuccessAt = 0;

  constructor(private readonly options: UpstreamOptions) {
    this.origin = new URL(options.baseUrl);
    this.pool = new Pool(this.origin.origin, {
      connections: 64,
      keepAliveTimeout: 10_000,
      connectTimeout: options.timeoutMs,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    this.budget = new RateBudget({ limit: options.rateLimit, windowMs: options.rateWindowMs, margin: options.rateMargin, store: options.stores?.budget });
    this.tokens = new TokenManager((licensee) => this.authenticate(licensee), { store: options.stores?.tokens });
    this.cache = options.stores?.cache ?? new MemoryCacheStore();
    this.breaker = createBreaker(options.halfOpenAfterMs);
  }

  /** Calls one endpoint for a licensee with typed parameters; resolves to the decoded answer. */
  async call<N extends Exclude<EndpointName, 'authenticate'>>(licensee: Licensee, name: N, params: ParamsOf<N>, options: CallOptions = {}): Promise<ResultOf<N>> {
    const row = ENDPOINTS[name] as unknown as Row;
    const { params: paramSchema } = this.schemasFor(name, row, licensee);
    const checked = paramSchema.safeParse(params);
    if (!checked.success) {
      const issue = checked.error.issues[0]!;
      const field = issue.path.map(String).join('.');
      throw new BadInputError(field ? `${field}: ${issue.message}` : issue.message, issue.path[0] === undefined ? undefined : String(issue.path[0]));
    }
    const wire = checked.data as Record<string, unknown>;
    const key = `${licensee.id}|${name}|${stableKey(wire)}`;
    if (row.cacheTtlMs > 0) {
      const cached = await this.cache.get(key);
      if (cached !== undefined) return cached as ResultOf<N>;
    }
    if (row.idempotent) {
      const shared = this.inFlight.get(key);
      if (shared) return shared as Promise<ResultOf<N>>;
    }
    const deadline = options.deadline ?? Date.now() + (this.options.deadlineMs ?? 15_000);
    const pending = this.execute(licensee, name, row, wire, deadline).then(async (result) => {
      if (row.cacheTtlMs > 0) {
        const eventId = wire.eventId;
        const tags = [`${licensee.id}|${name}`, ...(eventId === undefined ? [] : [`${licensee.id}|${name}|${eventId}`])];
        await this.cache.set(key, result, row.cacheTtlMs, tags);
      }
      for (const tag of row.invalidates?.(checked.data) ?? []) await this.cache.dropTag(`${licensee.id}|${tag}`);
      return result;
    });
    if (row.idempotent) {
      this.inFlight.set(key, pending);
      void pending.then(
        () => this.inFlight.delete(key),
        () => this.inFlight.delete(key),
      );
    }
    return pending as Promise<ResultOf<N>>;
  }

  /** Whether the licensee is served: a token held, or the last call succeeded, else one authenticate. */
  async ready(licensee: Licensee): Promise<boolean> {
    if (Date.now() - this.lastSuccessAt < 60_000 || (await this.tokens.holds(licensee))) return true;
    try {
      await this.tokens.get(licensee);
      return true;
    } catch {
      return false;
    }
  }

  /** Forgets every cached answer (tests, and operators after fixing data upstream). */
  async clearCache(): Promise<void> {
    await this.cache.clear();
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private schemasFor(name: string, row: Row, ctx: CodecContext) {
    const key = `${name}|${ctx.timeZone}`;
    let s = this.schemas.get(key);
    if (!s) this.schemas.set(key, (s = { params: row.params(ctx), response: row.response(ctx) }));
    return s;
  }

  private authenticate(licensee: Licensee): Promise<string> {
    const row = ENDPOINTS.authenticate as unknown as Row;
    const deadline = Date.now() + (this.options.deadlineMs ?? 15_000);
    return this.execute(licensee, 'authenticate', row, { key: licensee.key, systemIdentifier: licensee.id }, deadline).then(
      (r) => (r as { token: string }).token,
    );
  }

  /** Retry around breaker around one attempt; maps whatever is left to the taxonomy. */
  private async execute(licensee: Licensee, name: EndpointName, row: Row, wire: Record<string, unknown>, deadline: number): Promise<unknown> {
    const shouldRetry = (e: Error) =>
      e instanceof AttemptFailure && (row.idempotent || !e.maybeProcessed) && Date.now() < deadline;
    const policy = createRetry(this.options.maxRetries ?? 6, shouldRetry);
    let last: unknown;
    try {
      return await policy.execute(({ attempt }) => {
        // A backoff that ran past the deadline ends with the failure that caused it, not RATE_LIMITED.
        if (attempt > 0 && Date.now() >= deadline) throw last;
        return this.breaker.execute(() => this.attempt(licensee, name, row, wire, deadline)).catch((error: unknown) => {
          last = error;
          throw error;
        });
      });
    } catch (error) {
      throw this.finalError(error, name, row);
    }
  }

  private finalError(error: unknown, name: string, row: Row): Error {
    if (error instanceof UpstreamError) return error;
    if (error instanceof BrokenCircuitError) return new UpstreamUnavailableError('the reservation service is unavailable (circuit open); try again shortly');
    if (error instanceof AttemptFailure) {
      if (error.kind === 'throttled') return new RateLimitedError(Math.max(1, Math.ceil(this.options.rateWindowMs / 1000)));
      if (error.kind === 'malformed') return new UpstreamResponseError(`the reservation service sent an unreadable answer to ${name}`, error.status);
      const doubt = error.maybeProcessed && !row.idempotent ? ' (it may or may not have been applied)' : '';
      return new UpstreamUnavailableError(`the reservation service could not be reached for ${name}: ${error.message}${doubt}`, error.status);
    }
    return new UpstreamResponseError(`unexpected failure calling ${name}`);
  }

  /** One attempt: token, budget, send, classify. A token rejection re-authenticates once and repeats. */
  private async attempt(licensee: Licensee, name: EndpointName, row: Row, wire: Record<string, unknown>, deadline: number, tokenRetried = false): Promise<unknown> {
    const token = name === 'authenticate' ? undefined : await this.tokens.get(licensee);
    const slot = await this.budget.acquire(licensee.id, deadline);
    const { status, headers, text } = await this.send(name, row, token === undefined ? wire : { token, ...wire }).finally(
      () => void this.budget.finish(licensee.id, slot),
    );
    const body = parseJson(text);
    const problem = describeProblem(status, body);
    if (token !== undefined && isTokenRejection(status, body, problem)) {
      await this.tokens.reject(licensee, token);
      if (tokenRetried) throw new UpstreamResponseError('the reservation service refused a fresh token');
      this.options.logger?.debug({ endpoint: name, licensee: licensee.id }, 'token rejected; authenticating again');
      return this.attempt(licensee, name, row, wire, deadline, true);
    }
    if (status === 429 || problem?.code === 'RATE_LIMITED') {
      const retryAfter = Number(headers['retry-after']);
      const waitMs = Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter * 1000 : this.options.rateWindowMs;
      this.budget.pause(licensee.id, Date.now() + waitMs);
      this.options.logger?.warn({ endpoint: name, licensee: licensee.id, waitMs }, 'upstream answered 429; pausing this licensee');
      throw new AttemptFailure('throttled', 'rate limited', 429);
    }
    if (status >= 500) throw new AttemptFailure('server', `status ${status}`, status);
    if (problem) throw this.refusal(name, licensee, status, problem);
    if (status < 200 || status >= 300) throw new UpstreamResponseError(`the reservation service answered ${name} with status ${status}`, status);
    if (body === undefined) throw new AttemptFailure('malformed', 'body is not JSON', status);
    const { response } = this.schemasFor(name, row, licensee);
    const decoded = response.safeParse(body);
    if (!decoded.success) {
      throw new UpstreamResponseError(`the reservation service answered ${name} in an unexpected shape: ${decoded.error.issues[0]?.message ?? 'invalid'}`, status);
    }
    this.lastSuccessAt = Date.now();
    return decoded.data;
  }

  /** A refusal the service meant: mapped to the taxonomy, with its message cleaned of secrets. */
  private refusal(name: string, licensee: Licensee, status: number, problem: Problem): UpstreamError {
    const message = clean(problem.message ?? `status ${status}`, licensee);
    const code = problem.code ?? '';
    if (name === 'authenticate' && (status === 401 || code === 'INVALID_CREDENTIALS')) {
      return new UpstreamResponseError(`the reservation service refused the gateway's credentials for licensee ${licensee.id}`, status, code);
    }
    if (status === 404 || code === 'NOT_FOUND') return new NotFoundError(message, problem.field);
    if (status === 400 || code === 'MISSING_PARAMETER' || code === 'INVALID_PARAMETER') return new BadInputError(message, problem.field, status);
    if (status === 410 || code === 'FEATURE_UNAVAILABLE') return new UpstreamResponseError(`${name} is unavailable upstream: ${message}`, status, code);
    return new UpstreamResponseError(`the reservation service refused ${name}: ${message}`, status, code);
  }

  private async send(name: EndpointName, row: Row, params: Record<string, unknown>) {
    const path = `${this.origin.pathname.replace(/\/$/, '')}/api/${versionOf(name)}/${name}`;
    const json = row.body === 'json';
    try {
      const res = await this.pool.request({
        path,
        method: 'POST',
        headers: {
          'user-agent': this.options.userAgent,
          'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: json ? JSON.stringify(params) : encodeForm(params),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const text = await res.body.text();
      return { status: res.statusCode, headers: res.headers as Record<string, string | undefined>, text };
    } catch (error) {
      const e = error as { code?: string; name?: string; message?: string };
      const timeout = e.name === 'TimeoutError' || /TIMEOUT/.test(e.code ?? '');
      // A refused connection never reached the service: even a create may be sent again.
      const refused = e.code === 'ECONNREFUSED';
      throw new AttemptFailure(timeout ? 'timeout' : 'network', timeout ? 'timed out' : (e.code ?? 'network error'), undefined, !refused);
    }
  }
}

/** Form encoding of the contract: booleans as true/false, numbers in decimal, objects as JSON. */
function encodeForm(params: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    form.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  return form.toString();
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
 * The error a body reports, in any of the contract's forms: `{"error": {…}}`, `{"error": "…"}`,
 * `{"success": false, …}`, `{"status": "error", …}`; for a non-2xx status without a readable body,
 * a problem named after the status.
 */
function describeProblem(status: number, body: unknown): Problem | undefined {
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
    if (b.error && typeof b.error === 'object') {
      const e = b.error as Record<string, unknown>;
      return { code: text(e.code), message: text(e.message), field: text(e.field) };
    }
    if (typeof b.error === 'string') return { code: text(b.code), message: b.error, field: text(b.field) };
    if (b.success === false || b.status === 'error') return { code: text(b.code), message: text(b.message), field: text(b.field) };
  }
  if (status >= 400) return { message: `status ${status}` };
  return undefined;
}

/** Token rejections come in many forms (upstream contract): any of 200/400/401/403 naming the token. */
function isTokenRejection(status: number, body: unknown, problem: Problem | undefined): boolean {
  if (![200, 400, 401, 403].includes(status) || !problem) return false;
  if (problem.code === 'INVALID_TOKEN' || problem.code === 'TOKEN_EXPIRED') return true;
  if (problem.field === 'token' && status !== 400) return true;
  const words = `${problem.code ?? ''} ${problem.message ?? ''}`;
  if (TOKEN_WORDS.test(words) && TOKEN_PROBLEM.test(words)) return true;
  // A bare 401 (no readable body) to a call that carried a token is about that token.
  return status === 401 && body === undefined;
}

/** Upstream messages are passed on to clients: never with the key, a token or a URL in them. */
function clean(message: string, licensee: Licensee): string {
  return message
    .split(licensee.key)
    .join('[key]')
    .replace(/https?:\/\/\S+/g, '[url]')
    .replace(/[A-Za-z0-9_-]{24,}/g, '[redacted]')
    .slice(0, 300);
}

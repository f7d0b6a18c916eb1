import type { UpstreamAccount } from './account.ts';
import { type BudgetStore, type CallPriority, RateBudget } from './budget.ts';
import { type CacheStore, MemoryCacheStore } from './cache.ts';
import { compose, type NamedLayer, type Send, type UpstreamCall } from './call.ts';
import { classifyAnswer, toUpstreamError } from './classify.ts';
import {
  type AnyEndpoint,
  ENDPOINTS,
  type EndpointName,
  type ParamsOf,
  type ResultOf,
  schemasOf,
  versionOf,
} from './endpoints.ts';
import { AttemptFailure, UpstreamError } from './errors.ts';
import { KeptPage } from './kept-page.ts';
import { budgetLayer } from './layers/budget.ts';
import { retryLayer } from './layers/retry-and-breaker.ts';
import { SharedReads } from './layers/shared-reads.ts';
import { tokenLayer } from './layers/token.ts';
import type { UpstreamObserver } from './observer.ts';
import { checkParams } from './params.ts';
import { Readiness } from './readiness.ts';
import { type Breaker, createBreaker } from './resilience.ts';
import { StaleCopies } from './stale-copies.ts';
import { type AuthenticateAttempts, TokenManager, type TokenStore } from './tokens.ts';
import { type RawAnswer, Transport } from './transport.ts';

export interface UpstreamOptions {
  /** The service, without /api/… */
  baseUrl: string;
  userAgent: string;
  /** Per-attempt timeout for connect, headers and body. */
  timeoutMs: number;
  rateLimit: number;
  rateWindowMs: number;
  rateMargin: number;
  /** How long pages of paged lists and their page counts are shared across operations (0: in flight only). */
  pageTtlMs?: number;
  /**
   * How old a kept answer of a cached read may be to answer that read when the budget refuses it
   * (see stale-copies.ts; 0 or unset: refused with RATE_LIMITED, no copy kept).
   */
  staleMaxMs?: number;
  /** How long a call may wait for its token, the budget, the breaker and retries before it gives up. */
  deadlineMs?: number;
  /** Retries after the first attempt of an idempotent call. */
  maxRetries?: number;
  halfOpenAfterMs?: number;
  stores?: { budget?: BudgetStore; tokens?: TokenStore; cache?: CacheStore };
  logger?: { warn(obj: object, msg: string): void; debug(obj: object, msg: string): void };
  /** The clock of deadlines, the budget, token lifetimes and readiness (tests move it). */
  now?: () => number;
  /** Told of every attempt sent and every cached read (metrics, traces, the status page). */
  observer?: UpstreamObserver;
}

export interface CallOptions {
  /** Absolute time (ms since epoch, on the client's clock) by which the call must have started; default now + deadlineMs. */
  deadline?: number;
  /** Told each time an attempt is sent to the service; a cached or shared answer sends nothing. */
  onSent?: () => void;
  /**
   * Told when the budget could not serve this read before its deadline and the last answer kept of
   * it (no older than `staleMaxMs`, not dropped since) answered instead; `ageMs` is that answer's age.
   */
  onStale?: (ageMs: number) => void;
  /**
   * Whose turn comes first when calls wait for the budget (default `interactive`): `deep` for pages
   * past a list's first, behind interactive calls; `background` behind both.
   */
  priority?: CallPriority;
  /**
   * false: the answer is not kept, neither for the endpoint's lifetime nor as a stale copy (a change
   * feed's reads: read once to be compared, the next poll must see the service, and kept they would
   * hold a large event's every page in memory for UPSTREAM_STALE_MAX_MS). Identical calls in flight
   * still share it.
   */
  keep?: boolean;
  /**
   * The read must reach the service (a client asked for it: docs/clients.md, "How fresh an answer
   * is"): no kept answer, page or copy, answers it, nor a read in flight that began before it; the
   * budget's refusal is its answer. What it reads is kept for the reads after it.
   */
  fresh?: boolean;
}

/** What a kept copy costs beyond its answer's text (its key, tags and entry), as the stale copies count it. */
const STALE_ENTRY_BYTES = 256;

/** Retries of an authenticate: its own policy, short, and outside the data calls' breaker. */
const AUTHENTICATE_RETRIES = 2;

/**
 * The one way the gateway calls the REST service: `call(licensee, endpoint, params)`. It checks
 * and encodes the parameters, then passes the call through the layers of the call path, each in
 * its own file, composed here in the order a call passes them (octokit's plugins, undici's
 * interceptors). Keys and tokens never leave the upstream layer.
 */
export class UpstreamClient {
  readonly budget: RateBudget;
  readonly tokens: TokenManager;
  /** The data calls' path, outermost layer first; `layerNames` is pinned by a test. */
  readonly layerNames: readonly string[];
  private readonly transport: Transport;
  private readonly reads: SharedReads;
  private readonly readiness: Readiness;
  private readonly breaker: Breaker;
  private readonly path: Send;
  private readonly attempts = new WeakMap<UpstreamCall, number>();
  private closed = false;
  /** Read-aheads not yet ended: `readAheadsSettled` waits for them. */
  private readonly readingAhead = new Set<Promise<void>>();
  /** One clock for every layer: a deadline set on one clock and read on another means nothing. */
  private readonly now: () => number;

  constructor(private readonly options: UpstreamOptions) {
    const now = (this.now = options.now ?? Date.now);
    this.transport = new Transport(options);
    this.budget = new RateBudget({
      limit: options.rateLimit,
      windowMs: options.rateWindowMs,
      margin: options.rateMargin,
      store: options.stores?.budget,
      now,
    });
    const breaker = (this.breaker = createBreaker(options.halfOpenAfterMs));
    // An answer's length as received: what the stale copies count its size by.
    const sizes = new WeakMap<object, number>();
    // A page as the cache and the stale copies keep it: its bytes, decoded again when no reader holds it (kept-page.ts).
    const pages = new WeakMap<object, KeptPage>();
    const answer: Send = async (call) => {
      call.onSent?.();
      const raw = await this.sendObserved(call);
      const value = classifyAnswer(call, raw, now);
      if (typeof value === 'object' && value !== null) {
        sizes.set(value, raw.text.length);
        if (call.endpoint.pagedList && call.keep !== false) {
          const { response } = schemasOf(call.name, call.licensee);
          pages.set(
            value,
            new KeptPage(Buffer.from(raw.text), value, (text) => response.parse(JSON.parse(text)) as object),
          );
        }
      }
      return value;
    };
    this.tokens = new TokenManager((licensee, attempts) => authenticate(licensee, attempts), {
      store: options.stores?.tokens,
      now,
      logger: options.logger,
      onEcho: (event) => options.observer?.tokenEcho?.(event),
    });
    this.readiness = new Readiness({ tokens: this.tokens, breaker, now });
    this.reads = new SharedReads(
      options.stores?.cache ?? new MemoryCacheStore(undefined, now),
      options.pageTtlMs ?? 0,
      new StaleCopies({ maxAgeMs: options.staleMaxMs ?? 0, now }),
      (value) => (typeof value === 'object' && value !== null ? (sizes.get(value) ?? 0) : 0) + STALE_ENTRY_BYTES,
      (value) => (typeof value === 'object' && value !== null ? (pages.get(value) ?? value) : value),
    );

    // The token's own paths: no cache, no token, no breaker. Behind the data calls' breaker, a
    // half-open probe waiting for its token would wait for itself (the breaker deadlock).
    // Readiness' probe takes the path without retry: at most one authenticate on its behalf.
    const authenticateLayers: NamedLayer[] = [
      { name: 'budget', layer: budgetLayer(this.budget, options.logger) },
      { name: 'readiness', layer: this.readiness.layer },
    ];
    const authenticatePaths = {
      retrying: compose(
        [{ name: 'retry', layer: retryLayer({ maxRetries: AUTHENTICATE_RETRIES, now }) }, ...authenticateLayers],
        answer,
      ),
      once: compose(authenticateLayers, answer),
    };
    const authenticate = async (licensee: UpstreamAccount, attempts: AuthenticateAttempts): Promise<string> => {
      const call = this.prepare(
        licensee,
        'authenticate',
        { key: licensee.key, systemIdentifier: licensee.systemIdentifier },
        {},
      );
      const result = await authenticatePaths[attempts](call).catch((error: unknown) => {
        options.observer?.tokenFailure?.({ licensee: licensee.systemIdentifier });
        throw toUpstreamError(error, call, options.rateWindowMs);
      });
      return (result as { token: string }).token;
    };

    // A token is obtained before any budget slot is held (a slot held while waiting for the token
    // could starve the authenticate of one), and each attempt takes its own slot (each is a
    // request the service counts), so the budget sits inside retry.
    const layers: NamedLayer[] = [
      { name: 'shared-reads', layer: this.reads.layer },
      { name: 'token', layer: tokenLayer(this.tokens, options.logger) },
      { name: 'retry-and-breaker', layer: retryLayer({ maxRetries: options.maxRetries ?? 6, breaker, now }) },
      { name: 'budget', layer: budgetLayer(this.budget, options.logger) },
      { name: 'readiness', layer: this.readiness.layer },
    ];
    this.layerNames = layers.map((l) => l.name);
    this.path = compose(layers, answer);
  }

  /** Calls one endpoint for a licensee with typed parameters; resolves to the decoded answer. */
  async call<N extends Exclude<EndpointName, 'authenticate'>>(
    licensee: UpstreamAccount,
    name: N,
    params: ParamsOf<N>,
    options: CallOptions = {},
  ): Promise<ResultOf<N>> {
    let sent = false;
    const call = this.prepare(licensee, name, params, {
      ...options,
      onSent: () => ((sent = true), options.onSent?.()),
    });
    try {
      const result = (await this.path(call)) as ResultOf<N>;
      if (this.reads.ttlOf(call.endpoint) > 0)
        this.options.observer?.cacheRead?.({ licensee: licensee.systemIdentifier, endpoint: name, hit: !sent });
      return result;
    } catch (error) {
      throw toUpstreamError(error, call, this.options.rateWindowMs);
    }
  }

  /**
   * Reads an answer ahead for a request to come (the next page of a walk), so that it finds it
   * kept (UPSTREAM_PAGE_TTL_MS) or in flight. Only with budget headroom (RateBudget.acquireIfFree:
   * it never queues, never takes a slot a waiting call needs); only for answers that are kept, else
   * it would be a call for nothing. Resolves either way: a read-ahead that fails is only logged (debug).
   */
  async prefetch<N extends Exclude<EndpointName, 'authenticate'>>(
    licensee: UpstreamAccount,
    name: N,
    params: ParamsOf<N>,
  ): Promise<void> {
    if (this.closed) return;
    let call: UpstreamCall;
    try {
      call = this.prepare(licensee, name, params, { priority: 'background' });
    } catch {
      return;
    }
    if (this.reads.ttlOf(call.endpoint) <= 0) return;
    const reading = this.path({ ...call, onlyIfFree: true }).then(
      () => undefined,
      (error: unknown) => {
        const failure = toUpstreamError(error, call, this.options.rateWindowMs);
        const code = failure instanceof UpstreamError ? failure.code : 'INTERNAL';
        this.options.logger?.debug(
          { endpoint: name, licensee: licensee.systemIdentifier, code },
          'read-ahead not made',
        );
      },
    );
    this.readingAhead.add(reading);
    await reading;
    this.readingAhead.delete(reading);
  }

  /** Resolves once no read-ahead is in flight (tests count calls from there). */
  async readAheadsSettled(): Promise<void> {
    while (this.readingAhead.size > 0) await Promise.all(this.readingAhead);
  }

  /** Whether the licensee is served, answered from state within a second (see readiness.ts). */
  ready(licensee: UpstreamAccount): Promise<boolean> {
    return this.readiness.ready(licensee);
  }

  /** The service's "now", as its answers date them (our clock until one was read). */
  serviceNow(): number {
    return this.transport.serviceNow();
  }

  /** Whether the data calls' breaker is open: calls are refused without being sent (the metrics' gauge). */
  breakerOpen(): boolean {
    return this.breaker.isOpen();
  }

  /** Drops a licensee's cached answers of one endpoint (`getreservation`) or one event's (`getreservation|5001`). */
  async drop(licensee: UpstreamAccount, tag: `${EndpointName}` | `${EndpointName}|${number}`): Promise<void> {
    await this.reads.drop(licensee.systemIdentifier, tag);
  }

  /**
   * What someone else changed, read from the service: the licensee's answers kept under the tag
   * brought up to date by `revise`, or dropped with their copies kept to answer marked stale
   * (SharedReads.refresh).
   */
  async refresh(
    licensee: UpstreamAccount,
    tag: `${EndpointName}|${number}`,
    revise: (name: string, params: Record<string, unknown>, value: unknown) => unknown,
  ): Promise<void> {
    await this.reads.refresh(licensee.systemIdentifier, tag, revise);
  }

  /** Forgets every cached answer (tests, and operators after fixing data upstream). */
  async clearCache(): Promise<void> {
    await this.reads.clear();
  }

  /** Refuses the calls still waiting for the budget, then closes the connections. */
  async close(): Promise<void> {
    this.closed = true;
    this.budget.close();
    await this.transport.close();
  }

  /** Sends one attempt, telling the observer how it ended; attempts count per call object (the retry layer resends the same one). */
  private async sendObserved(call: UpstreamCall): Promise<RawAnswer> {
    const observer = this.options.observer;
    if (!observer) return this.transport.send(call);
    const attempt = (this.attempts.get(call) ?? 0) + 1;
    this.attempts.set(call, attempt);
    const startedAt = this.now();
    const started = performance.now();
    const tell = (status: number | 'network' | 'timeout') =>
      observer.attempt({
        licensee: call.licensee.systemIdentifier,
        endpoint: call.name,
        version: versionOf(call.name),
        status,
        attempt,
        durationMs: performance.now() - started,
        startedAt,
      });
    try {
      const answer = await this.transport.send(call);
      tell(answer.status);
      return answer;
    } catch (error) {
      tell(error instanceof AttemptFailure && error.kind === 'timeout' ? 'timeout' : 'network');
      throw error;
    }
  }

  /** Checks and encodes the parameters, before anything is sent: a client's mistake costs no call. */
  private prepare(licensee: UpstreamAccount, name: EndpointName, params: unknown, options: CallOptions): UpstreamCall {
    return {
      licensee,
      name,
      endpoint: ENDPOINTS[name] as unknown as AnyEndpoint,
      params: checkParams(name, licensee, params as never),
      deadline: options.deadline ?? this.now() + (this.options.deadlineMs ?? 15_000),
      ...(options.onSent ? { onSent: options.onSent } : {}),
      ...(options.onStale ? { onStale: options.onStale } : {}),
      ...(options.priority ? { priority: options.priority } : {}),
      ...(options.keep === false ? { keep: false } : {}),
      ...(options.fresh ? { fresh: true } : {}),
    };
  }
}

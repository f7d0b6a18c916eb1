import { type CacheStore, DROPPED, stableKey } from '../cache.ts';
import type { Layer, Send, UpstreamCall } from '../call.ts';
import { type AnyEndpoint, schemasOf } from '../endpoints.ts';
import { AttemptFailure, RateLimitedError } from '../errors.ts';
import { readKept } from '../kept-page.ts';
import { wireListOf } from '../lazy-list.ts';
import type { StaleCopies } from '../stale-copies.ts';

/**
 * The outermost layer: identical calls in flight share one request, answers are kept for the
 * endpoint's lifetime, and a mutation drops what it changes. Each cache tag has a generation,
 * raised when a mutation invalidates it: a read that started before the last invalidation of one
 * of its tags is neither joined by later reads nor cached, since it may have been answered from
 * before the change (otherwise a question saved a moment ago is missing from the list for a TTL).
 *
 * The answer of a cached read or a paged list also stays in `stale` (stale-copies.ts) past its
 * lifetime: when the budget refuses the read, that copy answers it, and the caller is told its age
 * (`onStale`). A copy is kept only when the answer is not older than an invalidation of its tags
 * (as the cache's rule above), and dropped with the same tags.
 */
export class SharedReads {
  private readonly inFlight = new Map<
    string,
    { pending: Promise<unknown>; generations: number[]; readAhead: boolean }
  >();
  private readonly generations = new Map<string, number>();

  /**
   * `pageTtlMs`: how long pages of paged lists and their page counts are kept (0: shared in flight only).
   * `sizeOf`: an answer's size in bytes, as the stale copies count it.
   * `keptFormOf`: what the cache and the stale copies keep of an answer (a page: its bytes, kept-page.ts).
   */
  constructor(
    private readonly cache: CacheStore,
    private readonly pageTtlMs = 0,
    private readonly stale?: StaleCopies,
    private readonly sizeOf: (value: unknown) => number = () => 0,
    private readonly keptFormOf: (value: unknown) => unknown = (value) => value,
  ) {
    // Another replica's mutation: reads in flight here may predate it too, so none joins them,
    // and the copy kept here predates it: never served stale.
    // A change another replica read from the service leaves the copies: they answer, marked stale,
    // a read the budget refuses (see `refresh`).
    cache.onDropped?.((tag, changedUpstream) => {
      this.generations.set(tag, this.generation(tag) + 1);
      if (!changedUpstream) this.stale?.dropTag(tag);
    });
  }

  readonly layer: Layer = (next: Send) => async (call: UpstreamCall) => {
    const { endpoint } = call;
    const key = `${call.licensee.systemIdentifier}|${call.name}|${stableKey(call.params)}`;
    const tags = tagsOf(call);
    const ttlMs = call.keep === false ? 0 : this.ttlOf(endpoint);
    if (ttlMs > 0 && !call.fresh) {
      const cached = await this.cache.get(key);
      // A page kept as JSON (Redis) is decoded again, as the service's answer was.
      const wire = wireListOf(cached);
      if (wire) return schemasOf(call.name, call.licensee).response.parse(wire);
      if (cached !== undefined) return readKept(cached);
    }
    const generations = tags.map((tag) => this.generation(tag));
    const shared = this.inFlight.get(key);
    // Paged lists even with pageTtlMs 0: sharing them across operations is the operator's choice, a
    // copy served only in place of a refusal, and marked as such, is not.
    const keepsCopy =
      call.keep !== false &&
      endpoint.idempotent &&
      (endpoint.pagedList === true || endpoint.cacheTtlMs > 0) &&
      this.stale?.enabled === true;
    // A read that must reach the service keeps its copy, but is never answered by one.
    const staleable = keepsCopy && !call.fresh;
    if (endpoint.idempotent && shared && !call.fresh && sameGenerations(shared.generations, generations)) {
      // A read-ahead may be refused for want of headroom where this call would wait its turn: it then calls itself.
      const joined =
        shared.readAhead && !call.onlyIfFree ? shared.pending.catch(() => this.layer(next)(call)) : shared.pending;
      return staleable ? this.orStale(joined, key, call) : joined;
    }

    const pending = next(call).then(async (result) => {
      const unchanged = sameGenerations(
        generations,
        tags.map((tag) => this.generation(tag)),
      );
      const kept = (keepsCopy || ttlMs > 0) && unchanged ? this.keptFormOf(result) : undefined;
      // Kept before the cache's await: a drop from now on finds the copy and forgets it.
      if (keepsCopy && unchanged) this.stale?.keep(key, kept, tags, this.sizeOf(result));
      if (ttlMs > 0 && unchanged) await this.cache.set(key, kept, ttlMs, tags);
      for (const tag of endpoint.invalidates?.(call.params) ?? [])
        await this.invalidate(`${call.licensee.systemIdentifier}|${tag}`);
      return result;
    });
    if (endpoint.idempotent) {
      this.inFlight.set(key, { pending, generations, readAhead: call.onlyIfFree === true });
      const forget = () => {
        if (this.inFlight.get(key)?.pending === pending) this.inFlight.delete(key);
      };
      pending.then(forget, forget);
    }
    return staleable ? this.orStale(pending, key, call) : pending;
  };

  /** The read's answer; when the budget refuses it, the copy kept of its last answer, if one is usable. */
  private async orStale(pending: Promise<unknown>, key: string, call: UpstreamCall): Promise<unknown> {
    try {
      return await pending;
    } catch (error) {
      const copy = refusedByBudget(error) ? this.stale?.get(key) : undefined;
      if (!copy) throw error;
      call.onStale?.(copy.ageMs);
      return readKept(copy.value);
    }
  }

  /** How long an endpoint's answers are kept (0: shared only while in flight). */
  ttlOf(endpoint: AnyEndpoint): number {
    return endpoint.pagedList ? this.pageTtlMs : endpoint.cacheTtlMs;
  }

  /**
   * Drops what is filed under an endpoint (and event) for a licensee, as a mutation does: for
   * changes learnt another way (the change feed sees a reservation modified upstream).
   */
  async drop(licensee: string, tag: string): Promise<void> {
    await this.invalidate(`${licensee}|${tag}`);
  }

  /**
   * What someone else changed, read from the service (a change feed's poll): each answer kept under
   * the licensee's tag is brought up to date by `revise` (its endpoint, its parameters, the answer
   * kept) where it can be, and stays fresh; one it cannot (DROPPED) leaves the cache, so the next
   * read goes to the service, but its copy stays to answer, marked stale, when the budget refuses
   * that read (a change every few seconds would otherwise leave nothing to answer with). An answer
   * `revise` leaves (undefined) is untouched by the change. Reads in flight are not kept: they may
   * have been answered before it. A store shared by replicas (Redis) holds JSON that is not revised
   * here: its answers under the tag are dropped, the copies kept.
   */
  async refresh(
    licensee: string,
    tag: string,
    revise: (name: string, params: Record<string, unknown>, value: unknown) => unknown,
  ): Promise<void> {
    const full = `${licensee}|${tag}`;
    this.generations.set(full, this.generation(full) + 1);
    // The cache and the copies hold the same object: revised once.
    const revised = new Map<unknown, unknown>();
    const reviseKept = (key: string, value: unknown) => {
      if (!revised.has(value)) {
        // The key: licensee|endpoint|parameters (their stable JSON).
        const [name = '', params = '{}'] = key.slice(licensee.length + 1).split(/\|(.*)/s);
        revised.set(value, revise(name, JSON.parse(params) as Record<string, unknown>, value));
      }
      return revised.get(value);
    };
    this.stale?.revise(full, (key, value) => {
      const revision = reviseKept(key, value);
      return revision === DROPPED ? undefined : revision;
    });
    if (this.cache.revise) this.cache.revise(full, reviseKept);
    else await this.cache.dropTag(full, true);
  }

  /** Forgets every cached answer. */
  async clear(): Promise<void> {
    this.stale?.clear();
    await this.cache.clear();
  }

  private async invalidate(tag: string): Promise<void> {
    this.generations.set(tag, this.generation(tag) + 1);
    this.stale?.dropTag(tag);
    await this.cache.dropTag(tag);
  }

  private generation(tag: string): number {
    return this.generations.get(tag) ?? 0;
  }
}

/** A call's answer is filed under its endpoint, and under its endpoint and event when it has one. */
function tagsOf(call: UpstreamCall): string[] {
  const base = `${call.licensee.systemIdentifier}|${call.name}`;
  const eventId = call.params.eventId;
  return eventId === undefined ? [base] : [base, `${base}|${String(eventId)}`];
}

/**
 * The licensee's budget could not serve the read before its deadline: the budget's own refusal, or
 * the service's 429s until the deadline. Any other failure (the service down, a bad answer) is
 * passed on: a copy stands in for a turn that did not come, not for an answer that was wrong.
 */
function refusedByBudget(error: unknown): boolean {
  return error instanceof RateLimitedError || (error instanceof AttemptFailure && error.kind === 'throttled');
}

function sameGenerations(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

import type { Cache, CacheEntityRecord } from '@envelop/response-cache';
import type { ExecutionResult } from 'graphql';
import { LRUCache } from 'lru-cache';

/**
 * One licensee's cached answers, indexed by the entities they hold (`Event:…` with an id, `Event`
 * for every answer holding an event or an empty list of them), so that a write drops exactly the
 * answers it may have changed. Bounded by entries and by the entities they hold, because answers
 * range from one event to a thousand reservations: the bound is on what they weigh, roughly.
 */
export interface StoreLimits {
  /** Answers kept at most. */
  maxAnswers: number;
  /** Entities (records) across all kept answers; an answer holding more is not kept. */
  maxEntities: number;
}

export const DEFAULT_STORE_LIMITS: StoreLimits = { maxAnswers: 500, maxEntities: 10_000 };

export class ResponseStore implements Cache {
  private readonly answers: LRUCache<string, ExecutionResult>;
  /** Entity key (`Type` or `Type:id`) → the answers holding it. */
  private readonly answersOf = new Map<string, Set<string>>();
  /** Answer → its entity keys, to unlink it when it goes. */
  private readonly entitiesOf = new Map<string, string[]>();

  constructor(private readonly limits: StoreLimits = DEFAULT_STORE_LIMITS) {
    this.answers = new LRUCache<string, ExecutionResult>({
      max: limits.maxAnswers,
      maxSize: limits.maxEntities,
      // Expired answers are dropped on time, not when next read: an idle gateway gives the memory back.
      ttlAutopurge: true,
      noDisposeOnSet: true,
      dispose: (_answer, id) => this.unlink(id),
    });
  }

  get(id: string): ExecutionResult | undefined {
    return this.answers.get(id);
  }

  /** How long the answer of this id is still kept, in ms (undefined when it is not). */
  remainingTtl(id: string): number | undefined {
    const remaining = this.answers.getRemainingTTL(id);
    return remaining > 0 ? remaining : undefined;
  }

  /** Whether an answer holding these entities, with this lifetime, would be kept (`set` keeps exactly those). */
  accepts(entities: Iterable<CacheEntityRecord>, ttl: number): boolean {
    return ttl > 0 && entityKeys(entities).size <= this.limits.maxEntities;
  }

  set(id: string, answer: ExecutionResult, entities: Iterable<CacheEntityRecord>, ttl: number): void {
    this.keep(id, answer, entities, ttl);
  }

  /** Keeps the answer, or drops what the id held when it may not be kept; says whether it was kept. */
  keep(id: string, answer: ExecutionResult, entities: Iterable<CacheEntityRecord>, ttl: number): boolean {
    const keys = entityKeys(entities);
    const size = Math.max(1, keys.size);
    this.unlink(id);
    if (size > this.limits.maxEntities || !(ttl > 0)) {
      this.answers.delete(id);
      return false;
    }
    this.answers.set(id, answer, { ttl: Number.isFinite(ttl) ? ttl : undefined, size });
    this.entitiesOf.set(id, [...keys]);
    for (const key of keys) {
      let holders = this.answersOf.get(key);
      if (!holders) this.answersOf.set(key, (holders = new Set()));
      holders.add(id);
    }
    return true;
  }

  /** Drops every answer holding one of these: by `Type:id`, or every answer of the type without an id. */
  invalidate(entities: Iterable<CacheEntityRecord>): void {
    for (const { typename, id } of entities) {
      const key = id === undefined || id === null ? typename : `${typename}:${id}`;
      for (const answer of [...(this.answersOf.get(key) ?? [])]) this.answers.delete(answer);
    }
  }

  get size(): number {
    return this.answers.size;
  }

  private unlink(id: string): void {
    for (const key of this.entitiesOf.get(id) ?? []) {
      const holders = this.answersOf.get(key);
      holders?.delete(id);
      if (holders?.size === 0) this.answersOf.delete(key);
    }
    this.entitiesOf.delete(id);
  }
}

/** `Type` for every entity, and `Type:id` for those with an id. */
function entityKeys(entities: Iterable<CacheEntityRecord>): Set<string> {
  const keys = new Set<string>();
  for (const { typename, id } of entities) {
    keys.add(typename);
    if (id !== undefined) keys.add(`${typename}:${id}`);
  }
  return keys;
}

import { describe, expect, it } from 'vitest';
import { ResponseStore } from '../../src/operations/response-cache/store.ts';

/** One licensee's cached answers: indexed by entity, bounded by what they hold. */
const answer = (name: string) => ({ data: { name } });
const events = (...ids: number[]) => ids.map((id) => ({ typename: 'Event', id }));

describe('ResponseStore', () => {
  it('drops by Type:id only the answers holding that entity, and by Type every answer holding one', () => {
    const store = new ResponseStore({ maxAnswers: 10, maxEntities: 100 });
    store.set('a', answer('a'), events(1), 60_000);
    store.set('b', answer('b'), events(2), 60_000);
    store.set('c', answer('c'), [{ typename: 'Hotel', id: 7 }], 60_000);
    store.invalidate([{ typename: 'Event', id: 1 }]);
    expect([store.get('a'), store.get('b')?.data]).toEqual([undefined, { name: 'b' }]);
    store.invalidate([{ typename: 'Event' }]);
    expect([store.get('b'), store.get('c')?.data]).toEqual([undefined, { name: 'c' }]);
  });

  it('keeps no answer holding more entities than the bound, and evicts the least recent to make room', () => {
    const store = new ResponseStore({ maxAnswers: 10, maxEntities: 5 });
    store.set('huge', answer('huge'), events(1, 2, 3, 4, 5, 6), 60_000);
    expect(store.get('huge')).toBeUndefined();
    store.set('old', answer('old'), events(1, 2), 60_000);
    store.set('new', answer('new'), events(3, 4), 60_000);
    // Each weighs 3 keys (Event and its two ids): both would be 6, over 5, so the older goes.
    expect(store.get('old')).toBeUndefined();
    expect(store.get('new')?.data).toEqual({ name: 'new' });
    // The evicted answer is unlinked: invalidating its entity touches nothing else.
    store.invalidate([{ typename: 'Event', id: 1 }]);
    expect(store.get('new')?.data).toEqual({ name: 'new' });
  });

  it('keeps nothing for a lifetime of 0', () => {
    const store = new ResponseStore({ maxAnswers: 10, maxEntities: 100 });
    store.set('a', answer('a'), events(1), 0);
    expect(store.size).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { MemoryCacheStore } from '../../src/upstream/cache.ts';

describe('the in-memory cache store', () => {
  // Fault: an expired page nobody asked for again stayed held (1 MB of JSON, decoded) until 10,000
  // newer answers pushed it out; under distinct 1000-record pages that was hundreds of MiB.
  it('lets go of expired answers nobody reads again, and keeps the live ones', async () => {
    let now = 0;
    const store = new MemoryCacheStore(10_000, () => now);
    for (let page = 0; page < 50; page++) await store.set(`page ${page}`, { records: page }, 5_000, ['event 1']);
    await store.set('event 1', { name: 'kept' }, 60_000, ['event 1']);
    expect(store.size).toBe(51);
    now = 6_000;
    await store.set('page 50', { records: 50 }, 5_000, ['event 1']);
    expect(store.size).toBe(2);
    expect(await store.get('page 0')).toBeUndefined();
    expect(await store.get('event 1')).toEqual({ name: 'kept' });
    expect(await store.get('page 50')).toEqual({ records: 50 });
    // A tag dropped later still finds every answer it files.
    await store.dropTag('event 1');
    expect(store.size).toBe(0);
  });
});

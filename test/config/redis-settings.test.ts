import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/environment.ts';
import { openRedis, RedisUnreachableError, redactRedisUrl } from '../../src/redis/connection.ts';

/** Fault: REDIS_URL was refused as "not in this version"; it and its companions are read and checked now. */
describe('Redis settings', () => {
  it('reads REDIS_URL (rediss:// with a password too), REDIS_PREFIX and REDIS_FALLBACK_SHARE, with their defaults', () => {
    expect(loadConfig({}).redis).toBeUndefined();
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redis).toEqual({
      url: 'redis://127.0.0.1:6379',
      prefix: 'rgw:',
      fallbackShare: 1 / 3,
    });
    expect(
      loadConfig({
        REDIS_URL: 'rediss://:s3cret@redis.internal:6380/2',
        REDIS_PREFIX: 'gw-eu:',
        REDIS_FALLBACK_SHARE: '1/2',
      }).redis,
    ).toEqual({
      url: 'rediss://:s3cret@redis.internal:6380/2',
      prefix: 'gw-eu:',
      fallbackShare: 0.5,
    });
    expect(loadConfig({ REDIS_URL: 'redis://r:6379', REDIS_FALLBACK_SHARE: '0.25' }).redis?.fallbackShare).toBe(0.25);
  });

  it('names each bad Redis setting, never echoing the URL (it may hold a password)', () => {
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env);
        return '';
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as Error).message;
      }
    };
    const message = problems({
      REDIS_URL: 'http://:hunter2@redis:6379',
      REDIS_PREFIX: 'has space',
      REDIS_FALLBACK_SHARE: '1.5',
    });
    expect(message).toContain('REDIS_URL: must be a redis:// or rediss:// URL');
    expect(message).toContain('REDIS_PREFIX: must be 1 to 64 letters');
    expect(message).toContain('REDIS_FALLBACK_SHARE: must be at most 1');
    expect(message).not.toContain('hunter2');
    expect(problems({ REDIS_URL: 'redis://r:6379', REDIS_FALLBACK_SHARE: '0' })).toContain(
      'REDIS_FALLBACK_SHARE: must be more than 0',
    );
    expect(problems({ REDIS_URL: 'redis://r:6379', REDIS_FALLBACK_SHARE: 'a third' })).toContain(
      'REDIS_FALLBACK_SHARE: must be a number or a fraction like 1/3',
    );
    expect(problems({ REDIS_PREFIX: 'x:', REDIS_FALLBACK_SHARE: '0.5' })).toMatch(
      /REDIS_PREFIX: is only used with REDIS_URL[\s\S]*REDIS_FALLBACK_SHARE: is only used with REDIS_URL/,
    );
  });

  it('a Redis that cannot be reached at start is named by REDIS_URL, password hidden, within the bound', async () => {
    // Port 1 on the loopback: nothing listens, the connection is refused.
    const failure = await openRedis({ url: 'redis://:hunter2@127.0.0.1:1', prefix: 'rgw:' }, 2_000).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(RedisUnreachableError);
    expect((failure as Error).message).toMatch(/^REDIS_URL: cannot reach Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1/);
    expect((failure as Error).message).not.toContain('hunter2');
    expect(redactRedisUrl('rediss://user:pw@h:1/0')).toBe('rediss://user:***@h:1/0');
  });
});

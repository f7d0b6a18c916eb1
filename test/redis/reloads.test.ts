import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { CLIENT_KEYS, LICENSEES_JSON } from '../auth/licensees-fixture.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';
import { type Replica, startReplica } from '../helpers/replicas.ts';
import { until } from '../helpers/subscriptions.ts';

/*
 * Replicas on one Redis each read their own copy of LICENSEES_FILE (each pod its own mount): a
 * replica whose copy changed serves the new file, the other the old one until its copy changes too.
 */

const serverPath = redisServerOrSkip();

describe.skipIf(!serverPath)('reloads on replicas sharing Redis', () => {
  let redis: TestRedis;
  let emulator: Emulator;
  const replicas: Replica[] = [];
  const copies: string[] = [];
  beforeAll(async () => {
    redis = await startRedis(serverPath!);
    emulator = await startEmulator({ port: 0, rateLimit: false });
    for (const n of [1, 2]) {
      const path = join(mkdtempSync(join(tmpdir(), `licensees-${n}-`)), 'licensees.json');
      writeFileSync(path, JSON.stringify(LICENSEES_JSON));
      copies.push(path);
      replicas.push(
        await startReplica({
          UPSTREAM_BASE_URL: emulator.url,
          LICENSEES_FILE: path,
          ACME_UPSTREAM_KEY: 'demo-key-1001',
          GLOBEX_UPSTREAM_KEY: 'demo-key-2002',
          GATEWAY_AUTH: 'api-key',
          REDIS_URL: redis.url,
          REDIS_PREFIX: 'reloads:',
        }),
      );
    }
  });
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await emulator?.close();
    await redis?.stop();
  });

  const status = async (replica: Replica, key: string) =>
    (
      await fetch(replica.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: '{ event(eventId: 5001) { eventId } }' }),
      })
    ).status;

  it('each replica reloads from its own copy of the file', async () => {
    const [first, second] = replicas as [Replica, Replica];
    const web = CLIENT_KEYS['acme-web'];
    expect([await status(first, web), await status(second, web)]).toEqual([200, 200]);
    const withoutWeb = {
      licensees: LICENSEES_JSON.licensees.map((licensee) => ({
        ...licensee,
        clients: licensee.clients.filter((client) => client.name !== 'acme-web'),
      })),
    };
    writeFileSync(copies[0]!, JSON.stringify(withoutWeb));
    let refused = false;
    const watching = (async () => {
      while (!refused) refused = (await status(first, web)) === 401;
    })();
    await until(() => refused, 2_000);
    await watching;
    expect(await status(second, web)).toBe(200);
    writeFileSync(copies[1]!, JSON.stringify(withoutWeb));
    let second401 = false;
    const start = Date.now();
    while (!second401 && Date.now() - start < 2_000) second401 = (await status(second, web)) === 401;
    expect(second401).toBe(true);
    expect(await status(first, CLIENT_KEYS['acme-ops'])).toBe(200);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';
import { type Replica, startReplicas } from '../helpers/replicas.ts';
import { pause, until } from '../helpers/subscriptions.ts';

/*
 * Two replicas on one Redis, idle (no endpoint, no subscriber), with Redis stopped for 15 s. Fault:
 * the webhook dispatcher's poll logged each failure, a warning with a stack each second per replica
 * (14 lines in 13 s). Now each component logs the loss once and the return once, as the rate
 * budget always did.
 */

const serverPath = redisServerOrSkip();
const OUTAGE_MS = 15_000;

/** A pino line of the log, with its component (`gateway` for the root logger's). */
interface Line {
  component: string;
  text: string;
}

function linesOf(output: string): Line[] {
  return output
    .split('\n')
    .filter((text) => text.startsWith('{'))
    .map((text) => ({ component: (JSON.parse(text) as { component?: string }).component ?? 'gateway', text }));
}

/** A line about the outage: it names Redis, or carries a failure (a store's error, as the flood's lines did). */
const aboutTheOutage = (line: Line) => /redis/i.test(line.text) || /"(err|error)":/.test(line.text);

describe.skipIf(!serverPath)('Redis stopped for 15 s under two replicas', () => {
  let redis: TestRedis;
  let emulator: Emulator;
  let replicas: Replica[] = [];

  beforeAll(async () => {
    redis = await startRedis(serverPath!);
    emulator = await startEmulator({ port: 0, rateLimit: false });
    replicas = await startReplicas(2, emulator.url, redis.url, 'outage-logs:', { LOG_LEVEL: 'info' });
  }, 60_000);
  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.stop()));
    await emulator?.close();
    await redis?.close();
  });

  it('each replica logs at most two lines about it per component (the loss and the return), with no stack', async () => {
    const before = replicas.map((replica) => replica.output().length);
    await redis.stop();
    await pause(OUTAGE_MS);
    await redis.start();
    // Back: the dispatcher's poll (each second) finds its queue again; a margin for the others' returns.
    const webhooksBack = /"component":"webhooks".*Redis reachable again/;
    const back = () => replicas.every((replica, i) => webhooksBack.test(replica.output().slice(before[i])));
    await until(back, 10_000);
    await pause(3_000);

    for (const [i, replica] of replicas.entries()) {
      const lines = linesOf(replica.output().slice(before[i])).filter(aboutTheOutage);
      const shown = lines.map((line) => line.text).join('\n');
      const perComponent = new Map<string, Line[]>();
      for (const line of lines) perComponent.set(line.component, [...(perComponent.get(line.component) ?? []), line]);
      for (const [component, logged] of perComponent)
        expect(logged.length, `${component}:\n${shown}`).toBeLessThanOrEqual(2);
      // The webhooks' pair, each named: the dispatcher polled throughout.
      const webhooks = perComponent.get('webhooks')?.map((line) => (JSON.parse(line.text) as { msg: string }).msg);
      expect(webhooks, shown).toEqual([
        'Redis unreachable: webhook deliveries wait until it is back',
        'Redis reachable again: webhook deliveries go on',
      ]);
      expect(shown).not.toContain('"stack"');
    }
  }, 60_000);
});

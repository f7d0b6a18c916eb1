import { print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { QuestionsDocument, SaveEventQuestionDocument } from '../documents/generated.ts';
import { closeGateways, type GatewayOnRedis, gatewaysOnRedis } from '../helpers/in-process-replicas.ts';
import { redisServerOrSkip, startRedis, type TestRedis } from '../helpers/redis.ts';

const serverPath = redisServerOrSkip();

/** Two gateways (replicas) in this process, each with its own Redis connection, over one emulator. */
describe.skipIf(!serverPath)('replicas sharing one Redis', () => {
  let redis: TestRedis;
  let emulator: Emulator;
  const replicas: GatewayOnRedis[] = [];
  /** While set, replica 2 holds the response-cache drops it hears here (its pub/sub socket read late). */
  let heldDrops: (() => void)[] | undefined;

  beforeAll(async () => {
    redis = await startRedis(serverPath!);
    emulator = await startEmulator({ port: 0, rateLimit: false });
    const config = loadConfig({ LOG_LEVEL: 'silent', REDIS_URL: redis.url, REDIS_PREFIX: 'gateways:' });
    replicas.push(
      ...(await gatewaysOnRedis(config, emulator.url, 2, (n, connection) =>
        n === 0
          ? connection
          : {
              ...connection,
              subscribe: (channel, listener) =>
                connection.subscribe(channel, (message) =>
                  heldDrops && channel.endsWith('response-cache-invalidations')
                    ? heldDrops.push(() => listener(message))
                    : listener(message),
                ),
            },
      )),
    );
  });
  afterAll(async () => {
    await closeGateways(replicas);
    await emulator?.close();
    await redis?.close();
  });

  const exec = async (replica: number, document: Parameters<typeof print>[0], variables: Record<string, unknown>) => {
    const res = await replicas[replica]!.gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: print(document), variables }),
    });
    return (await res.json()) as {
      data?: { event?: { questions: { questionId: number; question: string }[] } };
      errors?: unknown[];
    };
  };
  const calls = (endpoint: string) => emulator.state.log.filter((entry) => entry.endpoint === endpoint).length;

  it('a mutation through replica 1 is visible to a read through replica 2 at once (each kept its own cache before)', async () => {
    const before = await exec(1, QuestionsDocument, { eventId: 5001 });
    expect(before.errors).toBeUndefined();
    expect(before.data!.event!.questions.map((q) => q.questionId)).not.toContain(77);
    // Replica 1 reads replica 2's cached answers (the event's and the default questions): no upstream call.
    const reads = calls('geteventquestions');
    await exec(0, QuestionsDocument, { eventId: 5001 });
    expect(calls('geteventquestions')).toBe(reads);

    const saved = await exec(0, SaveEventQuestionDocument, {
      input: { eventId: 5001, questionId: 77, question: 'Shuttle from the airport?', type: 'TEXT_AREA', enabled: true },
    });
    expect(saved.errors).toBeUndefined();
    const after = await exec(1, QuestionsDocument, { eventId: 5001 });
    expect(after.data!.event!.questions).toContainEqual(
      expect.objectContaining({ questionId: 77, question: 'Shuttle from the airport?' }),
    );
    // One authenticate for both replicas.
    expect(calls('authenticate')).toBe(1);
  });

  it('a read through replica 2 before it heard the drop on pub/sub runs again rather than serve the kept answer', async () => {
    const before = await exec(1, QuestionsDocument, { eventId: 5003 });
    expect(before.data!.event!.questions.map((q) => q.questionId)).not.toContain(79);
    heldDrops = [];
    try {
      const saved = await exec(0, SaveEventQuestionDocument, {
        input: { eventId: 5003, questionId: 79, question: 'Parking needed?', type: 'TEXT_AREA', enabled: true },
      });
      expect(saved.errors).toBeUndefined();
      const reads = calls('geteventquestions');
      const after = await exec(1, QuestionsDocument, { eventId: 5003 });
      // Not heard yet: replica 2 still kept the old answer, and read the questions again instead.
      expect(heldDrops).toHaveLength(1);
      expect(after.data!.event!.questions).toContainEqual(expect.objectContaining({ questionId: 79 }));
      expect(calls('geteventquestions')).toBeGreaterThan(reads);
    } finally {
      for (const release of heldDrops.splice(0)) release();
      heldDrops = undefined;
    }
    // Heard: its answers are served from its cache again.
    await exec(1, QuestionsDocument, { eventId: 5003 });
    const reads = calls('geteventquestions');
    const again = await exec(1, QuestionsDocument, { eventId: 5003 });
    expect(again.data!.event!.questions).toContainEqual(expect.objectContaining({ questionId: 79 }));
    expect(calls('geteventquestions')).toBe(reads);
  });

  it('/ready names Redis: reached, and the budget shared', async () => {
    const res = await replicas[0]!.gateway.yoga.fetch('http://yoga/ready');
    expect(await res.json()).toMatchObject({ redis: { connected: true, budget: 'shared' } });
  });

  // Last: it stops Redis.
  it('with Redis away a mutation is answered (it was INTERNAL_SERVER_ERROR), and the other replica drops its answer once Redis is back', async () => {
    const before = await exec(1, QuestionsDocument, { eventId: 5002 });
    expect(before.data!.event!.questions.map((q) => q.questionId)).not.toContain(78);
    await redis.stop();
    try {
      const saved = await exec(0, SaveEventQuestionDocument, {
        input: { eventId: 5002, questionId: 78, question: 'Late check-out?', type: 'TEXT_AREA', enabled: true },
      });
      expect(saved.errors).toBeUndefined();
    } finally {
      await redis.start();
    }
    // Replica 2 answered from its response cache before; the drop reaches it once both are back on Redis.
    for (let tries = 0; ; tries++) {
      const after = await exec(1, QuestionsDocument, { eventId: 5002 });
      if (after.data?.event?.questions.some((q) => q.questionId === 78)) break;
      if (tries > 150) throw new Error('replica 2 kept answering without the new question');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
});

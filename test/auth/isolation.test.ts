import { afterAll, beforeAll } from 'vitest';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { describeIsolation, type Exec, handedTo, type Side } from '../helpers/isolation.ts';

/*
 * Two gateways over one emulator, one per licensee (single-licensee settings, no client
 * authentication). Each gateway sends its own User-Agent, so the log tells whose calls are whose.
 * The paths tried are in ../helpers/isolation.ts; isolation-one-gateway.test.ts tries them through
 * one gateway serving both.
 */
let emulator: Emulator;
const gateways: TestGateway[] = [];
const sides: Side[] = [];

async function sideOf(licensee: string, eventId: number, env: Record<string, string>): Promise<Side> {
  const userAgent = `gateway-of-${licensee}`;
  const t = await startGateway(undefined, { ...env, UPSTREAM_USER_AGENT: userAgent }, { shared: emulator });
  gateways.push(t);
  const exec: Exec = (document, variables) => t.exec(document, variables);
  return { licensee, eventId, read: exec, write: exec, userAgent, handed: await handedTo(exec, eventId) };
}

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, rateLimit: false });
  sides.push(await sideOf('1001', 5001, {}));
  sides.push(
    await sideOf('2002', 6001, {
      UPSTREAM_BASE_URL: emulator.url,
      UPSTREAM_SYSTEM_IDENTIFIER: '2002',
      UPSTREAM_KEY: 'demo-key-2002',
      UPSTREAM_TIMEZONE: 'America/New_York',
    }),
  );
});
afterAll(async () => {
  for (const t of gateways) await t.close();
  await emulator.close();
});

describeIsolation(() => emulator, sides);

import { afterAll, beforeAll } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { describeIsolation, type Exec, handedTo, type Side } from '../helpers/isolation.ts';
import { CLIENT_KEYS, licenseesEnv } from './licensees-fixture.ts';

/*
 * The isolation paths of ../helpers/isolation.ts through ONE gateway serving both licensees of the
 * LICENSEES_FILE fixture (acme = 1001, globex = 2002) with api-key authentication: each side is
 * that licensee's read client, and its read/write client for the mutations. Nothing but the
 * client's key tells the gateway whose request it is, so the emulator's log must show every call
 * made for the asking client's licensee.
 */
let t: TestGateway;
const sides: Side[] = [];

const asClient =
  (client: keyof typeof CLIENT_KEYS): Exec =>
  (document, variables) =>
    t.exec(document, variables, { authorization: `Bearer ${CLIENT_KEYS[client]}` });

async function sideOf(
  licensee: string,
  eventId: number,
  reader: keyof typeof CLIENT_KEYS,
  writer: keyof typeof CLIENT_KEYS,
): Promise<Side> {
  const read = asClient(reader);
  return { licensee, eventId, read, write: asClient(writer), handed: await handedTo(read, eventId) };
}

beforeAll(async () => {
  t = await startGateway(undefined, { ...licenseesEnv(), GATEWAY_AUTH: 'api-key' });
  sides.push(await sideOf('1001', 5001, 'acme-web', 'acme-ops'));
  sides.push(await sideOf('2002', 6001, 'globex-web', 'globex-ops'));
});
afterAll(() => t.close());

describeIsolation(() => t.emulator, sides);

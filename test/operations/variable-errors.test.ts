import { afterAll, beforeAll, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway();
});
afterAll(() => t.close());

// Fault (found by the fuzz test): graphql-js's variable errors reached clients with no
// extensions.code, unlike every other error, so a client switching on the code had nothing to read.
it.each([
  [
    'of the wrong type',
    { e: 'five' },
    'Variable "$e" got invalid value "five"; Int cannot represent non-integer value: "five"',
  ],
  [
    'out of the Int range',
    { e: 2 ** 31 },
    'Variable "$e" got invalid value 2147483648; Int cannot represent non 32-bit signed integer value: 2147483648',
  ],
  ['missing', {}, 'Variable "$e" of required type "Int!" was not provided.'],
])(
  'a variable %s is BAD_USER_INPUT with graphql-js’s message, before any upstream call',
  async (_name, variables, message) => {
    t.clearLog();
    const res = await t.exec('query ($e: Int!) { event(eventId: $e) { name } }', variables);
    expect(res.status).toBe(400);
    expect(res.errors).toEqual([
      { message, locations: [{ line: 1, column: 8 }], extensions: { code: 'BAD_USER_INPUT' } },
    ]);
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  },
);

import fc from 'fast-check';
import { createSchema, createYoga } from 'graphql-yoga';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { encodeLicenseeGlobalId } from '../../src/ids/global-id.ts';
import { idPart, idTextParts } from '../../src/ids/local-id.ts';
import { maskError } from '../../src/operations/mask-error.ts';
import { useWriteApplied } from '../../src/operations/write-applied.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { listen, type StreamResult, subscribeSse, subscribeWs, wsClient } from '../helpers/subscriptions.ts';

/*
 * Issue 36, item 1: a lone UTF-16 surrogate (JSON's `"\ud83d"`) in a client's text reached the
 * service, which stored the write, and then the attendee's id threw on it, so the client read
 * INTERNAL_SERVER_ERROR for a write that took effect. Ill-formed text is refused on every door before
 * any upstream call; ids are built from any record's text; and an error below a mutation's root
 * field says the write took effect.
 */

type Door = 'HTTP' | 'SSE' | 'graphql-ws';
const DOORS: Door[] = ['HTTP', 'SSE', 'graphql-ws'];

const UPSERT = 'mutation ($v: UpsertAttendeeInput!) { upsertAttendee(input: $v) { attendee { id } } }';
const CHANGES =
  'subscription ($since: DateTime, $filter: ReservationChangeFilter) { reservationChanged(eventId: 5001, since: $since, filter: $filter) { kind } }';

/** Each place a client's text goes, the variables that put a lone surrogate there, and what the refusal names. */
const ILL_FORMED: {
  name: string;
  query: string;
  variables: Record<string, unknown>;
  field: string;
  surrogate: string;
  position: number;
}[] = [
  {
    name: 'the issue’s mutation: a high surrogate at the end of an input object’s field',
    query: UPSERT,
    variables: { v: { attendeeId: "'; DROP ", registrationEventId: 'end\ud83d' } },
    field: '$v.registrationEventId',
    surrogate: 'D83D',
    position: 3,
  },
  {
    name: 'a low surrogate at the start of a query’s filter',
    query: 'query ($f: HotelFilter) { event(eventId: 5001) { hotels(filter: $f) { hotelId } } }',
    variables: { f: { city: '\udc00Paris' } },
    field: '$f.city',
    surrogate: 'DC00',
    position: 0,
  },
  {
    name: 'a reversed pair in a list inside an input object',
    query: UPSERT,
    variables: { v: { attendeeId: 'A-1', registrationEventId: 'R-1', ccEmails: ['a@example.com', 'b\ude00\ud83d'] } },
    field: '$v.ccEmails.1',
    surrogate: 'DE00',
    position: 1,
  },
  {
    name: 'a webhook URL',
    query:
      'mutation ($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { endpoint { id } } }',
    variables: { input: { url: 'https://hooks.example.com/\ud83d/in', eventIds: [5001] } },
    field: '$input.url',
    surrogate: 'D83D',
    position: 26,
  },
  {
    name: 'a webhook description, a variable inside an inline input object',
    query:
      'mutation ($d: String) { createWebhookEndpoint(input: { url: "https://hooks.example.com/in", eventIds: [5001], description: $d }) { endpoint { id } } }',
    variables: { d: 'ours \udbff' },
    field: '$d',
    surrogate: 'DBFF',
    position: 5,
  },
  {
    name: 'a subscription’s `since`',
    query: CHANGES,
    variables: { since: '2027-03-12T08:00:00Z\ud800' },
    field: '$since',
    surrogate: 'D800',
    position: 20,
  },
  {
    name: 'a subscription’s filter',
    query: CHANGES,
    variables: { filter: { groupCode: 'G\udfffX' } },
    field: '$filter.groupCode',
    surrogate: 'DFFF',
    position: 1,
  },
];

let t: TestGateway;
let server: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  t = await startGateway();
  server = await listen(t);
});
afterAll(async () => {
  await server.close();
  await t.close();
});

/** The first result (or the refusal) of an operation through a door. */
async function firstResult(door: Door, query: string, variables: Record<string, unknown>): Promise<StreamResult> {
  if (door === 'HTTP') return t.exec(query, variables);
  if (door === 'SSE') {
    const subscriber = await subscribeSse(fetch, server.url, variables, {}, query);
    const [result] = await subscriber.take(1);
    subscriber.close();
    return result ?? { errors: [{ message: `no result (HTTP ${subscriber.response.status})` }] };
  }
  const client = wsClient(server.wsUrl);
  try {
    const [result] = await subscribeWs(client, variables, query).take(1);
    return result ?? { errors: [{ message: 'no result' }] };
  } finally {
    await client.dispose();
  }
}

describe.each(DOORS)('ill-formed text over %s', (door) => {
  it.each(ILL_FORMED)('$name: BAD_USER_INPUT naming it, and no upstream call', async (place) => {
    t.clearLog();
    const result = await firstResult(door, place.query, place.variables);
    expect(result.data).toBeUndefined();
    expect(result.errors).toHaveLength(1);
    const [error] = result.errors!;
    expect(error!.extensions).toEqual({ code: 'BAD_USER_INPUT', field: place.field });
    expect(error!.message).toContain(
      `Variable "${place.field}" is not well-formed text: a lone UTF-16 surrogate (U+${place.surrogate}) at position ${place.position}.`,
    );
    expect(error!.message).toContain('Nothing was sent to the reservation service.');
    // Not even a token was fetched.
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  });

  // graphql-js (16) refuses a lone surrogate anywhere in a document, as itself or as GraphQL's own
  // escape, before any plugin could read the literal: nothing of the gateway needs to look there.
  it.each([
    ['as itself', 'end\ud83d'],
    ['as an escape', 'end\\ud83d'],
  ])(
    'a lone surrogate in an inline argument, %s, is a syntax error: refused before any upstream call',
    async (_how, text) => {
      t.clearLog();
      const result = await firstResult(
        door,
        `mutation { upsertAttendee(input: { attendeeId: "A-1", registrationEventId: "${text}" }) { attendee { id } } }`,
        {},
      );
      expect(result.errors?.map((error) => error.extensions?.code)).toEqual(['GRAPHQL_PARSE_FAILED']);
      expect(t.calls({ withAuthenticate: true })).toEqual([]);
    },
  );
});

describe('the variables’ walk', () => {
  it('names a key that is ill-formed, and a variable’s own name', async () => {
    t.clearLog();
    const key = await t.exec(UPSERT, { v: { attendeeId: 'A-1', registrationEventId: 'R-1', ['x\ud800']: 1 } });
    expect(key.errors?.[0]).toMatchObject({
      message: expect.stringContaining(
        'A key of variable "$v" is not well-formed text: a lone UTF-16 surrogate (U+D800) at position 1.',
      ),
      extensions: { code: 'BAD_USER_INPUT', field: '$v' },
    });
    const name = await t.exec('{ __typename }', { ['\udc00']: 1 });
    expect(name.errors?.[0]).toMatchObject({
      message: expect.stringContaining("A variable's name is not well-formed text"),
      extensions: { code: 'BAD_USER_INPUT' },
    });
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  });

  it('lets well-formed text through, surrogate pairs included', async () => {
    const res = await t.exec('query ($f: HotelFilter) { event(eventId: 5001) { hotels(filter: $f) { hotelId } } }', {
      f: { city: 'Hillsboro \ud83d\ude00' },
    });
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ event: { hotels: [] } });
  });
});

describe('ids of text with a lone surrogate', () => {
  /** Any code point, or now and then a lone surrogate or a reversed pair. */
  const anyText = fc.string({
    unit: fc.oneof(
      { weight: 8, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
      fc.constantFrom('\ud83d', '\ude00', '\udbff', '\udc00', '\ude00\ud83d'),
    ),
  });

  it('escapes well-formed text as it always did: ids are stable public names', () => {
    expect(idPart("'; DROP ")).toBe("'%3B%20DROP%20");
    expect(idPart('Café:Bar@1 😀')).toBe('Caf%C3%A9%3ABar%401%20%F0%9F%98%80');
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => idPart(text) === encodeURIComponent(text)));
  });

  it('escapes a lone surrogate as its WTF-8 bytes, without throwing', () => {
    expect(idPart('end\ud83d')).toBe('end%ED%A0%BD');
    expect(idPart('\udc00x')).toBe('%ED%B0%80x');
    expect(idPart('a\ude00\ud83db')).toBe('a%ED%B8%80%ED%A0%BDb');
    expect(idTextParts('end%ED%A0%BD:%ED%B0%80x', 2)).toEqual(['end\ud83d', '\udc00x']);
  });

  it('reads back the parts of any text', () => {
    fc.assert(
      fc.property(
        anyText.filter((text) => text.trim() !== ''),
        anyText.filter((text) => text.trim() !== ''),
        (a, b) => {
          const localId = `${idPart(a)}:${idPart(b)}`;
          expect(localId).toMatch(/^[\x21-\x7e]*$/);
          expect(idTextParts(localId, 2)).toEqual([a, b]);
        },
      ),
    );
  });

  it('node(id:) finds an attendee whose id holds one, and answers the same id', async () => {
    // GATEWAY_AUTH=none: every request acts for the one licensee.
    const licensee = loadConfig({}).licensees[0]!.id;
    const id = encodeLicenseeGlobalId('Attendee', `${idPart('A\ud800')}:${idPart('R-1')}`, licensee);
    t.clearLog();
    const res = await t.exec<{ node: Record<string, unknown> }, { id: string }>(
      'query ($id: ID!) { node(id: $id) { id ... on Attendee { attendeeId registrationEventId } } }',
      { id },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.node).toEqual({ id, attendeeId: 'A\ud800', registrationEventId: 'R-1' });
  });
});

describe('an error below a mutation’s root field: the write took effect', () => {
  let faulty: TestGateway;
  beforeAll(async () => {
    faulty = await startGateway();
  });
  afterAll(() => faulty.close());

  /** Every answer of the service's getreservation unreadable from now on (UPSTREAM_ERROR, not retried as a 5xx is). */
  const unreadableReservations = () =>
    fetch(`${faulty.emulator.url}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: [{ endpoint: 'getreservation', malformedRate: 1 }] }),
    });

  const WRITE_THEN_READ =
    'mutation ($v: UpsertAttendeeInput!) { upsertAttendee(input: $v) { attendee { reservations(eventId: 5001, first: 1) { totalCount } } } }';
  const applied = [
    {
      message:
        'upsertAttendee took effect (its write was applied: do not send it again), but part of its answer failed: the reservation service sent an unreadable answer to getreservation',
      path: ['upsertAttendee', 'attendee', 'reservations', 'totalCount'],
      extensions: { code: 'UPSTREAM_ERROR', writeApplied: true },
    },
  ];

  it('keeps its code, says the write took effect and carries writeApplied: true', async () => {
    await unreadableReservations();
    faulty.clearLog();
    const res = await faulty.exec(WRITE_THEN_READ, { v: { attendeeId: 'A-36', registrationEventId: 'R-36' } });
    // The attendee was written: only the read of its reservations failed.
    expect(faulty.calls()[0]).toEqual({
      endpoint: 'postattendee',
      params: { attendeeId: 'A-36', registrationEventId: 'R-36' },
    });
    expect(res.data).toBeNull();
    expect(res.errors).toEqual(applied);
  });

  it('says so over graphql-ws too (the same envelope)', async () => {
    await unreadableReservations();
    const server = await listen(faulty);
    const client = wsClient(server.wsUrl);
    try {
      const [result] = await subscribeWs(
        client,
        { v: { attendeeId: 'A-37', registrationEventId: 'R-37' } },
        WRITE_THEN_READ,
      ).take(1);
      expect(result).toEqual({ data: null, errors: applied });
    } finally {
      await client.dispose();
      await server.close();
    }
  });

  it('marks no error of a query', async () => {
    await unreadableReservations();
    const res = await faulty.exec('{ event(eventId: 5001) { reservations(first: 1) { totalCount } } }');
    expect(res.errors?.[0]?.extensions).toEqual({ code: 'UPSTREAM_ERROR' });
  });
});

describe('useWriteApplied, on a schema of its own', () => {
  // As the gateway passes it: Yoga calls its maskError with more arguments than ours takes.
  const mask = (error: unknown) => maskError(error);
  const yoga = createYoga({
    schema: createSchema({
      typeDefs: /* GraphQL */ `
        type Query { ok: Boolean }
        type Payload { id: ID! note: String }
        type Mutation { write: Payload! refused: Payload }
      `,
      resolvers: {
        Query: { ok: () => true },
        Mutation: {
          write: () => ({}),
          refused: () => {
            throw new Error('the write itself failed');
          },
        },
        Payload: {
          id: () => {
            throw new URIError('URI malformed');
          },
          note: () => 'kept',
        },
      },
    }),
    plugins: [useWriteApplied(mask)],
    maskedErrors: { maskError: mask },
    logging: false,
  });
  const run = async (query: string) =>
    (await (
      await yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      })
    ).json()) as { data?: unknown; errors?: { message: string; path?: unknown[]; extensions?: unknown }[] };

  it('masks an unexpected error below the root field before saying the write took effect: no detail passes', async () => {
    const res = await run('mutation { write { id note } }');
    expect(res).toEqual({
      data: null,
      errors: [
        {
          message:
            'write took effect (its write was applied: do not send it again), but part of its answer failed: Unexpected error.',
          locations: [{ line: 1, column: 20 }],
          path: ['write', 'id'],
          extensions: { code: 'INTERNAL_SERVER_ERROR', writeApplied: true },
        },
      ],
    });
  });

  it('leaves alone the failure of a root field itself (the write may not have happened)', async () => {
    const res = await run('mutation { refused { note } }');
    expect(res.errors).toEqual([
      {
        message: 'Unexpected error.',
        locations: [{ line: 1, column: 12 }],
        path: ['refused'],
        extensions: { code: 'INTERNAL_SERVER_ERROR' },
      },
    ]);
  });
});

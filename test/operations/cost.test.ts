import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import fc from 'fast-check';
import { GraphQLInt, GraphQLList, GraphQLObjectType, GraphQLSchema, parse, print } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { estimateUpstreamCalls } from '../../src/operations/cost.ts';
import { costs, costsNothing, oncePerEvent, type Rule } from '../../src/schema/cost.ts';
import {
  EventHotelsDocument,
  EventPageDocument,
  EverythingDocument,
  ReservationNumbersDocument,
  ReservationsWithHotelsDocument,
  ReservationWindowDocument,
} from '../documents/generated.ts';
import { readAheadsSettled, readyToCount, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { globalId } from '../helpers/global-id.ts';
import { fragmentsTwicePerLevel } from '../helpers/hostile-documents.ts';

let t: TestGateway;
const SHOW_COST = { 'x-show-cost': '1' };

/**
 * Besides the operation's own calls, at most one page more: the page after a window that ends on a
 * page boundary, read ahead for the next window when the budget has headroom. Not the operation's
 * call, nor counted against its limit.
 */
async function atMostOnePageAhead(g: TestGateway, own: number): Promise<void> {
  await readAheadsSettled(g);
  const calls = g.calls();
  expect(calls.length - own).toBeGreaterThanOrEqual(0);
  expect(calls.length - own).toBeLessThanOrEqual(1);
}

beforeAll(async () => {
  // The budget is not what these tests check: the file's reads together spend the real one (a
  // tenth of each window is kept for writes, issue 37).
  t = await startGateway({ rateLimit: false }, { UPSTREAM_RATE_LIMIT: '100000' });
});
afterAll(() => t.close());
beforeEach(() => readyToCount(t));

const everythingVars = () => ({
  eventId: 5001,
  hotelId: 202,
  reservationNumber: 700_004,
  groupCode: t.emulator.state.store.groupCodesByEvent.get(5001)![0]!.groupCode,
  nodeId: globalId('Event:5001'),
});

describe('upstream cost estimate', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- documents of different operations in one table
  const cases: [string, TypedDocumentNode<any, any>, () => Record<string, unknown>][] = [
    ['EventPage', EventPageDocument, () => ({})],
    ['EventHotels', EventHotelsDocument, () => ({ eventId: 5001, a: 201, b: 202 })],
    ['ReservationsWithHotels 2500', ReservationsWithHotelsDocument, () => ({ eventId: 5001, first: 2500 })],
    ['ReservationNumbers last 5', ReservationNumbersDocument, () => ({ eventId: 5001, last: 5 })],
    ['ReservationWindow 10', ReservationWindowDocument, () => ({ eventId: 5001, first: 10 })],
    ['Everything', EverythingDocument, everythingVars],
  ];
  it.each(cases)(
    '%s: never below what the operation really calls, and allowed by default',
    async (_name, document, variables) => {
      const vars = variables();
      const estimate = estimateUpstreamCalls(document, vars);
      const res = await t.exec(document, vars as never);
      expect(res.errors).toBeUndefined();
      expect(estimate).toBeGreaterThanOrEqual(t.calls().length);
      expect(estimate).toBeLessThanOrEqual(120);
    },
  );

  it('refuses an operation that would spend the budget, before any upstream call', async () => {
    const query = `{ event(eventId: 5001) { reservations(first: 5000) { edges { node { attendee { reservations(eventId: 5001) { totalCount } } } } } } }`;
    expect(estimateUpstreamCalls(parse(query))).toBeGreaterThan(5000);
    const res = await t.exec(query);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COSTLY', maxCalls: 120 });
    expect(res.errors?.[0]?.extensions?.estimatedCalls).toBeGreaterThan(5000);
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  });

  it('follows variables and counts answers that each look up their reservation', () => {
    const query = parse(
      `query ($n: Int) { event(eventId: 1) { attendeeAnswers(first: $n) { edges { node { reservation { status } question { question } } } } } }`,
    );
    // 1 event + 1 page (a window from the start, inside one page) + one reservation per answer + one shared question list.
    expect(estimateUpstreamCalls(query, { n: 10 })).toBe(1 + 1 + 10 + 1);
    expect(estimateUpstreamCalls(query, { n: 300 })).toBe(1 + 1 + 300 + 1);
  });

  // Fault: variable defaults were ignored, so `$n: Int = 1000` was estimated as the default window
  // of 100 (103 estimated, 227 made) and a 100-id default list as one id.
  it('estimates on the coerced variables, their defaults included', async () => {
    const answers = `query ($n: Int = 1000) { event(eventId: 5001) { attendeeAnswers(first: $n) { edges { node { reservation { status } } } } } }`;
    expect(estimateUpstreamCalls(parse(answers))).toBeGreaterThanOrEqual(1000);
    const refused = await t.exec(answers);
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COSTLY' });
    expect(t.calls({ withAuthenticate: true })).toEqual([]);

    const ids = Array.from({ length: 100 }, (_, i) => 5001 + i);
    const events = `query ($ids: [Int!]! = [${ids.join(', ')}]) { events(eventIds: $ids) { eventId } }`;
    expect(estimateUpstreamCalls(parse(events))).toBe(100);
    const res = await t.exec(events);
    expect(res.errors).toBeUndefined();
    expect(estimateUpstreamCalls(parse(events))).toBeGreaterThanOrEqual(t.calls().length);
  });

  it('counts one call per mutation field plus what its payload reads', () => {
    const mutation = parse(
      `mutation { a: createCustomField(input: { name: "x" }) { customField { customFieldId } } b: createCustomField(input: { name: "y" }) { customField { event { name } } } }`,
    );
    expect(estimateUpstreamCalls(mutation)).toBe(3);
  });

  it('counts no write for a mutation that selects only __typename: nothing is sent', () => {
    expect(estimateUpstreamCalls(parse('mutation { __typename }'))).toBe(0);
  });
});

describe('rules declared on the fields', () => {
  it('counts what each selected field declares, in the scope its parent declares for it', () => {
    const Leaf = new GraphQLObjectType({
      name: 'Leaf',
      fields: { lookup: { type: GraphQLInt, ...costs(oncePerEvent) }, value: { type: GraphQLInt, ...costsNothing } },
    });
    const tenEvents: Rule = () => ({ calls: 3, below: { records: 10, events: 10 } });
    const query = new GraphQLObjectType({
      name: 'Query',
      fields: { list: { type: new GraphQLList(Leaf), ...costs(tenEvents) } },
    });
    const scratch = new GraphQLSchema({ query });
    // 3 for the list, then one lookup per distinct event of its ten records.
    expect(estimateUpstreamCalls(parse('{ list { lookup value } }'), {}, null, Infinity, scratch)).toBe(3 + 10);
    expect(estimateUpstreamCalls(parse('{ list { value } }'), {}, null, Infinity, scratch)).toBe(3);
  });
});

// Fault: a window after the cursor of a page's last record was estimated at 2 pages while it read
// the page before, its own page and the page count (3 calls, 4 with the event): below the calls made.
describe('windows of 1000 at a page boundary', () => {
  const windowOf1000 = (hasNextPage: boolean) =>
    `query ($after: String) { event(eventId: 5001) { reservations(first: 1000, after: $after) { pageInfo { endCursor ${hasNextPage ? 'hasNextPage' : ''} } edges { node { reservationNumber } } } } }`;
  /** The end cursor of the first 1000 reservations: with the next key when that window asked hasNextPage. */
  const boundaryCursor = async (withNextKey: boolean) =>
    (await t.exec<{ event: { reservations: { pageInfo: { endCursor: string } } } }, never>(windowOf1000(withNextKey)))
      .data!.event.reservations.pageInfo.endCursor;

  // Calls made: the event, the window's page, the page after it when hasNextPage asks, and the
  // page before when the cursor has no next key to check. The estimate cannot know the cursor, nor
  // whether the list changed since (a seek may then read up to 3 pages more): 1 + 2 + 3.
  it.each([
    ['asks hasNextPage, after a cursor with the next key', true, true, 3],
    ['asks hasNextPage, after a cursor without it', true, false, 4],
    ['does not ask hasNextPage, after a cursor with the next key', false, true, 2],
    ['does not ask hasNextPage, after a cursor without it', false, false, 3],
  ])('first: 1000 that %s: estimated at or above its calls', async (_name, asksNextPage, withNextKey, calls) => {
    const after = await boundaryCursor(withNextKey);
    await readyToCount(t);
    const query = windowOf1000(asksNextPage);
    const res = await t.exec(query, { after }, SHOW_COST);
    expect(res.errors).toBeUndefined();
    expect(res.extensions?.upstreamCalls).toBe(calls);
    await atMostOnePageAhead(t, calls);
    expect(estimateUpstreamCalls(parse(query), { after })).toBe(6);
  });

  // The estimate counts the getevent that a first page holding records makes unnecessary: an empty
  // first page still asks it (an unknown event is null), so that call stays in the upper bound.
  it.each([
    [true, 2],
    [false, 1],
  ])(
    'from the start of the list, hasNextPage asked: %s, makes %i calls, estimated at one more (the getevent an empty page needs)',
    async (asksNextPage, calls) => {
      const query = windowOf1000(asksNextPage);
      const res = await t.exec(query, {}, SHOW_COST);
      expect(res.errors).toBeUndefined();
      expect(res.extensions?.upstreamCalls).toBe(calls);
      await atMostOnePageAhead(t, calls);
      expect(estimateUpstreamCalls(parse(query))).toBe(calls + 1);
    },
  );
});

describe('windows anywhere in a list', () => {
  // Its own gateway with a budget that does not run out, as below.
  let w: TestGateway;
  beforeAll(async () => {
    w = await startGateway({ rateLimit: false }, { UPSTREAM_RATE_LIMIT: '100000' });
  });
  afterAll(() => w.close());
  const size = fc.constantFrom(0, 1, 999, 1000, 1001, 2000);
  /** A window of event 5001's reservations, its cursor from an earlier window; pageInfo and totalCount selected or not. */
  const windowQuery = (
    first: number,
    cursorArg: 'after' | 'before' | null,
    hasNextPage: boolean,
    totalCount: boolean,
  ) =>
    `query ${cursorArg ? '($cursor: String)' : ''} { event(eventId: 5001) { reservations(first: ${first}${cursorArg ? `, ${cursorArg}: $cursor` : ''}) {
      ${totalCount ? 'totalCount' : ''} pageInfo { endCursor ${hasNextPage ? 'hasNextPage' : ''} } edges { node { reservationNumber } } } } }`;

  it('are never estimated below what they really call, whatever the cursor', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          earlier: fc.constantFrom(1, 999, 1000, 1500, 2000),
          earlierAsked: fc.boolean(),
          first: size,
          cursorArg: fc.constantFrom('after' as const, 'before' as const, null),
          hasNextPage: fc.boolean(),
          totalCount: fc.boolean(),
        }),
        async ({ earlier, earlierAsked, first, cursorArg, hasNextPage, totalCount }) => {
          const before = await w.exec<{ event: { reservations: { pageInfo: { endCursor: string } } } }, never>(
            windowQuery(earlier, null, earlierAsked, false),
          );
          const cursor = before.data!.event.reservations.pageInfo.endCursor;
          await readyToCount(w);
          const query = windowQuery(first, cursorArg, hasNextPage, totalCount);
          const res = await w.exec(query, { cursor }, SHOW_COST);
          expect(res.errors, query).toBeUndefined();
          // The operation's own calls; besides them at most the one page after the window is read
          // ahead for the next window, which is not the operation's call.
          const own = res.extensions?.upstreamCalls as number;
          await atMostOnePageAhead(w, own);
          expect(estimateUpstreamCalls(parse(query), { cursor }), query).toBeGreaterThanOrEqual(own);
        },
      ),
      { numRuns: 30, seed: 20_261_122 },
    );
  }, 120_000);
});

// Fault: a lookup under a list (a custom field's event, that event's hotels) was counted once per
// place in the document instead of once per distinct parent the list can hold (estimated 6, made 16).
describe('lookups under lists', () => {
  it('counts an event lookup per distinct event of the custom fields, and its hotels per event', async () => {
    for (const eventId of [5001, 5002, 5003]) {
      const created = await t.exec(
        `mutation { createCustomField(input: { name: "Field of ${eventId}", eventId: ${eventId} }) { customField { customFieldId } } }`,
      );
      expect(created.errors).toBeUndefined();
    }
    await readyToCount(t);
    const query = parse('{ customFields { name event { name hotels { name } } } }');
    const res = await t.exec(print(query));
    expect(res.errors).toBeUndefined();
    expect(t.count('getevent')).toBe(3);
    expect(t.count('gethotels')).toBe(3);
    expect(estimateUpstreamCalls(query)).toBeGreaterThanOrEqual(t.calls().length);
  });

  it('counts a hotel lookup under several events once per event, not once per place', async () => {
    const query = parse('{ events(eventIds: [5001, 5002, 5003]) { hotel(hotelId: 201) { name } } }');
    const res = await t.exec(print(query));
    expect(res.errors).toBeUndefined();
    expect(t.count('gethotels')).toBe(3);
    expect(estimateUpstreamCalls(query)).toBeGreaterThanOrEqual(t.calls().length);
  });
});

// Fault: fragments were re-expanded at every spread with no memo: 23 fragments, each spreading the
// next twice, walked 2^23 expansions (25 s of a blocked event loop). How fast the refusal is now:
// `npm run bench -- hostile` (docs/benchmarks.md); here, what it does.
describe('fragments spread many times', () => {
  it('refuses a costly document of fragments nested 23 deep, before any upstream call', async () => {
    const query = fragmentsTwicePerLevel(
      'reservations(first: 5000) { edges { node { attendee { reservations(eventId: 5001) { totalCount } } } } }',
    );
    expect(query.length).toBeLessThan(2500);
    const res = await t.exec(query);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COSTLY' });
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  });

  it('estimates fragments expanded once each: 60 levels (2^60 expansions without a memo) finish', () => {
    const cheap = parse(fragmentsTwicePerLevel('hotels { name }', 60));
    expect(estimateUpstreamCalls(cheap)).toBeLessThanOrEqual(2);
  });

  it('answers a cheap one, its reservation flags read from the same fragments', async () => {
    const query = fragmentsTwicePerLevel(
      'reservations(first: 2) { edges { node { reservationNumber contact { city } } } }',
    );
    const res = await t.exec<
      { event: { name: string; reservations: { edges: { node: { contact: { city: string | null } } }[] } } },
      never
    >(query);
    expect(res.errors).toBeUndefined();
    expect(res.data!.event.reservations.edges).toHaveLength(2);
    expect(t.calls().find((c) => c.endpoint === 'getreservation')?.params).toMatchObject({ fullContactInfo: 'true' });
    expect(estimateUpstreamCalls(parse(query))).toBeGreaterThanOrEqual(t.calls().length);
  });
});

/** Selections drawn from the lookups the estimate has rules for, nested the way clients nest them. */
const pick = (parts: fc.Arbitrary<string>[]) =>
  fc
    .tuple(...parts.map((part) => fc.option(part, { nil: undefined })))
    .map((chosen) => chosen.filter((x) => x !== undefined).join(' ') || '__typename');
const eventId = fc.constantFrom(5001, 5002, 5003);
const window = fc.constantFrom(1, 3, 10);
const reservationFields = pick([
  fc.constant('reservationNumber'),
  fc.constant('hotel { name }'),
  fc.constant('event { name hotels { name } }'),
  eventId.map(
    (id) => `attendee { reservations(eventId: ${id}, first: 2) { totalCount edges { node { reservationNumber } } } }`,
  ),
  fc.constant('customFieldValues { customField { name event { name } } }'),
]);
const eventFields = pick([
  fc.constant('name'),
  fc.constant('hotels { name }'),
  fc.constant('hotel(hotelId: 201) { name partnerHotelId }'),
  fc.constant('groupCodes { code hotel { name } }'),
  fc.constant('pickup { hotel { name } }'),
  fc.constant('customFields { name event { name } }'),
  fc
    .tuple(window, fc.boolean(), reservationFields)
    .map(
      ([first, count, fields]) =>
        `reservations(first: ${first}) { ${count ? 'totalCount' : ''} edges { node { ${fields} } } }`,
    ),
  reservationFields.map((fields) => `reservation(reservationNumber: 700004) { ${fields} }`),
  fc
    .tuple(window, reservationFields)
    .map(
      ([first, fields]) =>
        `attendeeAnswers(first: ${first}) { edges { node { reservation { ${fields} } question { question } } } }`,
    ),
]);
const operation = fc.oneof(
  fc.tuple(eventId, eventFields).map(([id, fields]) => `{ event(eventId: ${id}) { ${fields} } }`),
  fc
    .tuple(fc.uniqueArray(eventId, { minLength: 1 }), eventFields)
    .map(([ids, fields]) => `{ events(eventIds: [${ids.join(', ')}]) { ${fields} } }`),
  eventFields.map((fields) => `{ customFields { event { ${fields} } } }`),
);

describe('generated operations', () => {
  // Its own gateway with a budget that does not run out: forty operations spend far more than 240 calls.
  let g: TestGateway;
  beforeAll(async () => {
    g = await startGateway({ rateLimit: false }, { UPSTREAM_RATE_LIMIT: '100000' });
    // Custom fields of several events, so a field's event is not always the same lookup.
    for (const id of [5002, 5003])
      await g.exec(
        `mutation { createCustomField(input: { name: "Field of ${id}", eventId: ${id} }) { customField { customFieldId } } }`,
      );
  });
  afterAll(() => g.close());

  it('are never estimated below what they really call', async () => {
    await fc.assert(
      fc.asyncProperty(operation, async (query) => {
        await readyToCount(g);
        const estimate = estimateUpstreamCalls(parse(query));
        const res = await g.exec(query);
        if (estimate > 120) {
          expect(res.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COSTLY');
        } else {
          expect(res.errors, query).toBeUndefined();
          expect(estimate, query).toBeGreaterThanOrEqual(g.calls().length);
        }
      }),
      { numRuns: 40, seed: 20_261_122 },
    );
  }, 120_000);
});

// Fault: `_entities` was not counted at all, so a federation gateway's references could
// spend the licensee's budget unchecked; the estimate now counts them by type from `representations`.
describe('_entities', () => {
  const ENTITIES = parse(`query ($representations: [_Any!]!) {
    _entities(representations: $representations) {
      ... on Event { name hotels { name } }
      ... on Hotel { name }
      ... on Reservation { status hotel { name } }
      ... on Attendee { attendeeId }
    }
  }`);
  const refs = (count: number, make: (i: number) => object) => Array.from({ length: count }, (_, i) => make(i));
  const cases: [string, () => object[]][] = [
    [
      '500 Hotel references of one event',
      () => refs(500, (i) => ({ __typename: 'Hotel', eventId: 5001, hotelId: 201 + (i % 14) })),
    ],
    ['Event references of three events', () => refs(6, (i) => ({ __typename: 'Event', eventId: 5001 + (i % 3) }))],
    [
      '2 Reservation references',
      () => refs(2, (i) => ({ __typename: 'Reservation', eventId: 5003, reservationNumber: 770_001 + i })),
    ],
    [
      '10 Reservation references of a 2-page event',
      () => refs(10, (i) => ({ __typename: 'Reservation', eventId: 5003, reservationNumber: 770_990 + i })),
    ],
    [
      '10 Reservation references of a 26-page event',
      () => refs(10, (i) => ({ __typename: 'Reservation', eventId: 5001, reservationNumber: 700_001 + i })),
    ],
    [
      'Attendee references',
      () => refs(50, (i) => ({ __typename: 'Attendee', attendeeId: `A-${i}`, registrationEventId: 'R-1' })),
    ],
  ];
  it.each(cases)('%s: never below what they really call', async (_name, representations) => {
    const variables = { representations: representations() };
    const estimate = estimateUpstreamCalls(ENTITIES, variables);
    const res = await t.exec(print(ENTITIES), variables as never);
    expect(res.errors).toBeUndefined();
    expect(estimate).toBeGreaterThanOrEqual(t.calls().length);
  });

  it('counts 500 Hotel references of one event as one gethotels, and Attendee references as nothing', () => {
    const hotels = refs(500, (i) => ({ __typename: 'Hotel', eventId: 5001, hotelId: 201 + (i % 14) }));
    expect(estimateUpstreamCalls(ENTITIES, { representations: hotels })).toBe(1);
    const attendees = refs(500, (i) => ({ __typename: 'Attendee', attendeeId: `A-${i}`, registrationEventId: 'R-1' }));
    expect(estimateUpstreamCalls(ENTITIES, { representations: attendees })).toBe(0);
  });

  it('refuses references over the limit as any query, before any upstream call', async () => {
    const representations = refs(200, (i) => ({ __typename: 'Reservation', eventId: 6000 + i, reservationNumber: 1 }));
    expect(estimateUpstreamCalls(ENTITIES, { representations })).toBeGreaterThan(120);
    const res = await t.exec(print(ENTITIES), { representations } as never);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COSTLY', maxCalls: 120 });
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  });
});

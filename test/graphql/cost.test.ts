import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { parse } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { estimateUpstreamCalls } from '../../src/schema/cost.ts';
import { readyToCount, startGateway, type TestGateway } from '../helpers/gateway.ts';
import {
  EventHotelsDocument,
  EventPageDocument,
  EverythingDocument,
  ReservationNumbersDocument,
  ReservationsWithHotelsDocument,
  ReservationWindowDocument,
} from '../operations/generated.ts';

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway();
});
afterAll(() => t.close());
beforeEach(() => readyToCount(t));

const everythingVars = () => ({
  eventId: 5001,
  hotelId: 202,
  reservationNumber: 700_004,
  groupCode: t.emulator.state.store.groupCodesByEvent.get(5001)![0]!.groupCode,
  nodeId: Buffer.from('Event:5001').toString('base64'),
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
  it.each(cases)('%s: never below what the operation really calls, and allowed by default', async (_name, document, variables) => {
    const vars = variables();
    const estimate = estimateUpstreamCalls(document, vars);
    const res = await t.exec(document, vars as never);
    expect(res.errors).toBeUndefined();
    expect(estimate).toBeGreaterThanOrEqual(t.calls().length);
    expect(estimate).toBeLessThanOrEqual(120);
  });

  it('refuses an operation that would spend the budget, before any upstream call', async () => {
    const query = `{ event(eventId: 5001) { reservations(first: 5000) { edges { node { attendee { reservations(eventId: 5001) { totalCount } } } } } } }`;
    expect(estimateUpstreamCalls(parse(query))).toBeGreaterThan(5000);
    const res = await t.exec(query);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'QUERY_TOO_COSTLY', maxCalls: 120 });
    expect(res.errors?.[0]?.extensions?.estimatedCalls).toBeGreaterThan(5000);
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  });

  it('follows variables and counts answers that each look up their reservation', () => {
    const query = parse(`query ($n: Int) { event(eventId: 1) { attendeeAnswers(first: $n) { edges { node { reservation { status } question { question } } } } } }`);
    // 1 event + 2 pages + one reservation per answer + one shared question list.
    expect(estimateUpstreamCalls(query, { n: 10 })).toBe(1 + 2 + 10 + 1);
    expect(estimateUpstreamCalls(query, { n: 300 })).toBe(1 + 2 + 300 + 1);
  });

  it('counts one call per mutation field plus what its payload reads', () => {
    const mutation = parse(`mutation { a: createCustomField(input: { name: "x" }) { customField { customFieldId } } b: createCustomField(input: { name: "y" }) { customField { event { name } } } }`);
    expect(estimateUpstreamCalls(mutation)).toBe(3);
  });
});

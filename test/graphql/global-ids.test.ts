import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readyToCount, startGateway, type TestGateway } from '../helpers/gateway.ts';
import { globalId } from '../helpers/global-id.ts';

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway();
});
afterAll(() => t.close());
beforeEach(() => readyToCount(t));

/** An id of licensee 1001, the gateway's own, so that what is tested is the part after the licensee check. */
const id = (text: string) => globalId(text);
const node = (globalId: string) => t.exec<{ node: { __typename: string } | null }, { id: string }>('query ($id: ID!) { node(id: $id) { __typename } }', { id: globalId });

describe('node and nodes with ids that name nothing (fault: a malformed id answered INTERNAL_SERVER_ERROR)', () => {
  it.each([
    ['not base64 of Type:id', 'xyz'],
    ['an unknown type name', id('Foo:1')],
    ['a type that is not a Node', id('Query:1')],
    ['an event id that is not a number', id('Event:abc')],
    ['a reservation id with one part', id('Reservation:5001')],
    ['a negative reservation number', id('Reservation:5001:-5')],
    ['an event id beyond what the service holds', id('Event:-2147483648')],
    ['a hotel id in exponent notation', id('Hotel:1e3:5')],
  ])('%s is null, with no error and no upstream call', async (_name, globalId) => {
    const res = await node(globalId);
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ node: null });
    expect(t.calls()).toEqual([]);
  });

  it('another licensee’s event and reservation are null', async () => {
    for (const globalId of [id('Event:6001'), id('Reservation:6001:900001'), id('Hotel:6001:1')]) {
      const res = await node(globalId);
      expect(res.errors).toBeUndefined();
      expect(res.data).toEqual({ node: null });
    }
  });

  it('nodes: an impossible id is null and costs no call; the valid one is still fetched (fault: it fetched, then refused the list)', async () => {
    const res = await t.exec('query ($ids: [ID!]!) { nodes(ids: $ids) { __typename ... on Event { eventId } } }', {
      ids: [id('Reservation:5001:-1'), 'garbage', id('Event:5001')],
    });
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ nodes: [null, null, { __typename: 'Event', eventId: 5001 }] });
    expect(t.calls().map((c) => c.endpoint)).toEqual(['getevent']);
  });
});

describe('events(eventIds) (fault: ids were checked one by one after earlier ones were fetched)', () => {
  it('refuses a list with an impossible id before any call, naming it', async () => {
    const res = await t.exec('{ events(eventIds: [83, -2147483648]) { eventId } }');
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.message).toContain('eventIds[1]: -2147483648');
    expect(t.calls()).toEqual([]);
  });

  it('a possible but unknown id is null among the known ones', async () => {
    const res = await t.exec('{ events(eventIds: [83, 5001]) { eventId } }');
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ events: [null, { eventId: 5001 }] });
  });
});

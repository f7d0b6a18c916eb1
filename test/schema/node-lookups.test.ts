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
const node = (globalId: string) =>
  t.exec<{ node: { __typename: string } | null }, { id: string }>('query ($id: ID!) { node(id: $id) { __typename } }', {
    id: globalId,
  });

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

describe('every type with an identity is a Node (GroupCode, EventQuestion, CustomField, Attendee)', () => {
  type Listed = {
    event: {
      groupCodes: { id: string; code: string }[];
      questions: { id: string; questionId: number }[];
      reservations: { edges: { node: { attendee: { id: string; attendeeId: string } | null } }[] };
    };
    customFields: { id: string; customFieldId: number }[];
  };
  const listed = async () => {
    const res = await t.exec<Listed, undefined>(
      '{ event(eventId: 5001) { groupCodes { id code } questions { id questionId } reservations(first: 50) { edges { node { attendee { id attendeeId } } } } } customFields(eventId: 5001) { id customFieldId } }',
    );
    expect(res.errors).toBeUndefined();
    return res.data!;
  };
  const nodeOf = (globalId: string) =>
    t.exec<{ node: Record<string, unknown> | null }, { id: string }>(
      'query ($id: ID!) { node(id: $id) { __typename id ... on GroupCode { code } ... on EventQuestion { questionId } ... on CustomField { customFieldId } ... on Attendee { attendeeId } } }',
      { id: globalId },
    );

  it('node(id:) answers each from the id its list handed out, with one upstream read at most', async () => {
    const data = await listed();
    const code = data.event.groupCodes[0]!;
    const question = data.event.questions[0]!;
    const field = data.customFields[0]!;
    const attendee = data.event.reservations.edges.map((e) => e.node.attendee).find((a) => a !== null)!;
    expect(attendee).toBeDefined();
    const cases: [string, Record<string, unknown>, string[]][] = [
      [code.id, { __typename: 'GroupCode', id: code.id, code: code.code }, ['getgroupcodes']],
      [
        question.id,
        { __typename: 'EventQuestion', id: question.id, questionId: question.questionId },
        ['geteventquestions'],
      ],
      [field.id, { __typename: 'CustomField', id: field.id, customFieldId: field.customFieldId }, ['getcustomfields']],
      // The service has no attendee read: the id is the whole identity.
      [attendee.id, { __typename: 'Attendee', id: attendee.id, attendeeId: attendee.attendeeId }, []],
    ];
    for (const [globalId, expected, endpoints] of cases) {
      await readyToCount(t);
      const res = await nodeOf(globalId);
      expect(res.errors).toBeUndefined();
      expect(res.data?.node).toEqual(expected);
      expect(t.calls().map((c) => c.endpoint)).toEqual(endpoints);
    }
  });

  it('nodes(ids:) answers them in order, with null for one that does not exist', async () => {
    const data = await listed();
    const ids = [data.event.groupCodes[0]!.id, id('GroupCode:5001:NO-SUCH-CODE'), data.customFields[0]!.id];
    const res = await t.exec<{ nodes: ({ __typename: string } | null)[] }, { ids: string[] }>(
      'query ($ids: [ID!]!) { nodes(ids: $ids) { __typename } }',
      { ids },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.nodes).toEqual([{ __typename: 'GroupCode' }, null, { __typename: 'CustomField' }]);
  });

  it('an id written before these types were nodes (base64url) still names its record', async () => {
    const data = await listed();
    const question = data.event.questions[0]!;
    const legacy = Buffer.from(`EventQuestion:5001:${question.questionId}@1001`).toString('base64url');
    expect((await nodeOf(legacy)).data?.node).toMatchObject({
      __typename: 'EventQuestion',
      questionId: question.questionId,
    });
  });

  it.each([
    ['another licensee’s group code', globalId('GroupCode:5001:VIP', '1002')],
    ['another licensee’s attendee', globalId('Attendee:A-1:R-1', '1002')],
    ['an attendee id with one part', id('Attendee:A-1')],
    ['an attendee id with an empty part', id('Attendee::R-1')],
    ['an attendee id with a broken escape', id('Attendee:%E0%A4%A:R-1')],
    ['a question id that is not a number', id('EventQuestion:5001:x')],
    ['a custom field id beyond what the service holds', id('CustomField:99999999999')],
    ['a group code id without its event', id('GroupCode:VIP')],
  ])('%s is null, with no error and no upstream call', async (_name, globalId) => {
    const res = await nodeOf(globalId);
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({ node: null });
    expect(t.calls()).toEqual([]);
  });

  it('an attendee id keeps `:` and `@` of its parts', async () => {
    const res = await t.exec<{ upsertAttendee: { attendee: { id: string } } }, undefined>(
      'mutation { upsertAttendee(input: { attendeeId: "a:b@c", registrationEventId: "R@1:2" }) { attendee { id } } }',
    );
    expect(res.errors).toBeUndefined();
    const res2 = await nodeOf(res.data!.upsertAttendee.attendee.id);
    expect(res2.data?.node).toEqual({
      __typename: 'Attendee',
      id: res.data!.upsertAttendee.attendee.id,
      attendeeId: 'a:b@c',
    });
  });
});

import { beforeEach, describe, expect, it } from 'vitest';
import type { Emulator } from '../../src/emulator/server.ts';
import type { GraphQLAnswer } from './gateway.ts';

/*
 * The isolation paths between two licensees, 1001 (events 5001-5003) and 2002 (6001 and 6002),
 * for two set-ups: a gateway per licensee, or one gateway with both licensees and a client of
 * each. Everything one side is handed (global ids, cursors, event and reservation numbers, group
 * codes, custom fields) is presented by the other on every path; the answer is null or an error,
 * never the other's data, and the emulator's log shows each call carrying the asking side's token.
 */

/** Sends one operation as a client of one side. */
export type Exec = <T = unknown>(document: string, variables?: Record<string, unknown>) => Promise<GraphQLAnswer<T>>;

export interface Side {
  /** The upstream licensee (systemIdentifier), as the emulator's log names it. */
  licensee: string;
  eventId: number;
  /** As a client with read access, and as one with read and write access. */
  read: Exec;
  write: Exec;
  /** The User-Agent of the side's own gateway, when each side has one. */
  userAgent?: string;
  /** What a client of this licensee was handed, filled in beforeAll. */
  handed: Handed;
}

export interface Handed {
  eventName: string;
  ids: { event: string; hotel: string; reservation: string };
  hotelId: number;
  groupCode: string;
  reservationNumbers: number[];
  /** Confirmation numbers and emails of the reservations handed out: none may reach the other side. */
  private: string[];
  reservationsCursor: string;
  answersCursor: string;
  customFieldId: number;
  attendee: { attendeeId: string; registrationEventId: string; reservationsCursor: string };
}

const HANDOUTS = `query Handouts($eventId: Int!) {
  event(eventId: $eventId) {
    id
    name
    hotels { id hotelId }
    groupCodes { code }
    reservations(first: 200) {
      edges {
        cursor
        node {
          id
          reservationNumber
          confirmationNumber
          contact { email }
          attendee { attendeeId }
        }
      }
    }
    attendeeAnswers(first: 1) { pageInfo { endCursor } }
  }
  customFields { customFieldId }
}`;

/** A reservation's attendee, and the cursor of its reservations in the event (a list keyed by event and attendee). */
const ATTENDEE = `query Attendee($eventId: Int!, $reservationNumber: Int!) {
  event(eventId: $eventId) {
    reservation(reservationNumber: $reservationNumber) {
      attendee { attendeeId registrationEventId reservations(eventId: $eventId, first: 1) { pageInfo { endCursor } } }
    }
  }
}`;

interface AttendeeData {
  event: {
    reservation: {
      attendee: { attendeeId: string; registrationEventId: string; reservations: { pageInfo: { endCursor: string } } };
    };
  };
}

interface HandoutsData {
  event: {
    id: string;
    name: string;
    hotels: { id: string; hotelId: number }[];
    groupCodes: { code: string }[];
    reservations: {
      edges: {
        cursor: string;
        node: {
          id: string;
          reservationNumber: number;
          confirmationNumber: string | null;
          contact: { email: string | null } | null;
          attendee: { attendeeId: string } | null;
        };
      }[];
    };
    attendeeAnswers: { pageInfo: { endCursor: string | null } };
  };
  customFields: { customFieldId: number }[];
}

export async function handedTo(read: Exec, eventId: number): Promise<Handed> {
  const res = await read<HandoutsData>(HANDOUTS, { eventId });
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  const event = res.data!.event;
  const edges = event.reservations.edges;
  const linked = edges.find((e) => e.node.attendee)!.node.reservationNumber;
  const attendee = (await read<AttendeeData>(ATTENDEE, { eventId, reservationNumber: linked })).data!.event.reservation
    .attendee;
  return {
    eventName: event.name,
    ids: { event: event.id, hotel: event.hotels[0]!.id, reservation: edges[0]!.node.id },
    hotelId: event.hotels[0]!.hotelId,
    groupCode: event.groupCodes[0]!.code,
    reservationNumbers: edges.slice(0, 3).map((e) => e.node.reservationNumber),
    private: edges
      .slice(0, 3)
      .flatMap((e) => [e.node.confirmationNumber, e.node.contact?.email])
      .filter((v): v is string => !!v),
    reservationsCursor: edges[1]!.cursor,
    answersCursor: event.attendeeAnswers.pageInfo.endCursor!,
    customFieldId: res.data!.customFields[0]!.customFieldId,
    attendee: {
      attendeeId: attendee.attendeeId,
      registrationEventId: attendee.registrationEventId,
      reservationsCursor: attendee.reservations.pageInfo.endCursor,
    },
  };
}

/** Registers the isolation tests over `sides` (both filled in the caller's beforeAll) and one emulator. */
export function describeIsolation(emulator: () => Emulator, sides: Side[]): void {
  beforeEach(() => {
    emulator().state.log = [];
  });

  /** The upstream calls since the test began, authenticate left out, with the licensee of the token each carried. */
  const calls = () => emulator().state.log.filter((entry) => entry.endpoint !== 'authenticate');

  /**
   * Every call since the test began (made for the intruder, the only side asking) carried the
   * intruder's token, and came from its gateway when each side has its own.
   */
  function expectOwnTokensOnly(intruder: Side): void {
    for (const entry of emulator().state.log) {
      expect(entry.licensee, `${entry.endpoint} from ${entry.userAgent}`).toBe(intruder.licensee);
      if (intruder.userAgent) expect(entry.userAgent, entry.endpoint).toBe(intruder.userAgent);
    }
  }

  /** Nothing the owner was handed (names, confirmation numbers, emails) is in an answer to the intruder. */
  function expectNothingOf(owner: Side, answer: GraphQLAnswer<unknown>): void {
    const text = JSON.stringify(answer);
    for (const secret of [owner.handed.eventName, ...owner.handed.private]) expect(text).not.toContain(secret);
  }

  /** What a write would change in the emulator's store. */
  function written(): string {
    const { questions, customFields, customFieldValues, actualized } = emulator().state.store;
    return JSON.stringify([...questions, ...customFields, ...customFieldValues, ...actualized]);
  }

  describe.each([
    ['1001', '2002'],
    ['2002', '1001'],
  ])('a client of %s with what a client of %s was handed', (intruderId, ownerId) => {
    const intruder = () => sides.find((s) => s.licensee === intruderId)!;
    const owner = () => sides.find((s) => s.licensee === ownerId)!;

    // Fault: global ids did not carry the licensee: the other's ids were looked up with this one's token.
    it('node and nodes with the other’s global ids are null, and cost no upstream call', async () => {
      const { event, hotel, reservation } = owner().handed.ids;
      for (const id of [event, hotel, reservation]) {
        const res = await intruder().read('query ($id: ID!) { node(id: $id) { id __typename } }', { id });
        expect(res.errors).toBeUndefined();
        expect(res.data).toEqual({ node: null });
      }
      const res = await intruder().read('query ($ids: [ID!]!) { nodes(ids: $ids) { id } }', {
        ids: [event, hotel, reservation],
      });
      expect(res.errors).toBeUndefined();
      expect(res.data).toEqual({ nodes: [null, null, null] });
      expect(calls()).toEqual([]);
    });

    it('its own ids still resolve (the check refuses only the other’s)', async () => {
      const { event, reservation } = intruder().handed.ids;
      const res = await intruder().read<{ nodes: ({ id: string } | null)[] }>(
        'query ($ids: [ID!]!) { nodes(ids: $ids) { id } }',
        { ids: [event, reservation] },
      );
      expect(res.data?.nodes).toEqual([{ id: event }, { id: reservation }]);
    });

    it('event and events with the other’s event ids are null, asked with its own token only', async () => {
      const theirs = owner().eventId;
      const res = await intruder().read(
        'query ($e: Int!, $es: [Int!]!) { event(eventId: $e) { name } events(eventIds: $es) { name } }',
        { e: theirs, es: [theirs, intruder().eventId] },
      );
      expect(res.errors).toBeUndefined();
      expect(res.data).toEqual({ event: null, events: [null, { name: intruder().handed.eventName }] });
      expectNothingOf(owner(), res);
      expectOwnTokensOnly(intruder());
    });

    // Fault: cursors did not carry the licensee; the other's cursor was refused only by chance of a
    // different filter hash, with a message about filters.
    it('the other’s cursors, as after or before on its own event, are BAD_USER_INPUT naming the argument, and read no page', async () => {
      const { reservationsCursor, answersCursor } = owner().handed;
      const cases: [string, string, string][] = [
        ['reservations(first: 2, after: $cursor) { edges { cursor } }', reservationsCursor, 'after'],
        ['reservations(last: 2, before: $cursor) { edges { cursor } }', reservationsCursor, 'before'],
        ['attendeeAnswers(first: 2, after: $cursor) { edges { cursor } }', answersCursor, 'after'],
      ];
      for (const [connection, cursor, arg] of cases) {
        const res = await intruder().read(
          `query ($eventId: Int!, $cursor: String!) { event(eventId: $eventId) { ${connection} } }`,
          { eventId: intruder().eventId, cursor },
        );
        expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
        expect(res.errors?.[0]?.message).toBe(`${arg}: the cursor was not made for this licensee`);
      }
      // At most the event itself was read, for the connection's parent: no page of any list.
      expect(calls().filter((c) => c.endpoint !== 'getevent')).toEqual([]);
      expectOwnTokensOnly(intruder());
    });

    // Fault: an attendee's reservations were keyed by event and attendee alone, so the other's cursor
    // was taken for the same attendee and event, and the other's event was asked for.
    it('the other’s cursor for an attendee’s reservations in the other’s event is refused before any read', async () => {
      const { attendee } = owner().handed;
      const res = await intruder().write(
        `mutation ($input: UpsertAttendeeInput!, $eventId: Int!, $cursor: String!) {
          upsertAttendee(input: $input) { attendee { reservations(eventId: $eventId, first: 1, after: $cursor) { edges { node { reservationNumber } } } } }
        }`,
        {
          input: { attendeeId: attendee.attendeeId, registrationEventId: attendee.registrationEventId },
          eventId: owner().eventId,
          cursor: attendee.reservationsCursor,
        },
      );
      expect(res.errors?.[0]?.extensions).toEqual({ code: 'BAD_USER_INPUT', field: 'after', writeApplied: true });
      // The upsert itself took effect (issue 36): the error under it says so.
      expect(res.errors?.[0]?.message).toBe(
        'upsertAttendee took effect (its write was applied: do not send it again), but part of its answer failed: after: the cursor was not made for this licensee',
      );
      expect(calls().map((c) => c.endpoint)).toEqual(['postattendee']);
      expectOwnTokensOnly(intruder());
    });

    it('links for the other’s event, group code and reservation are null, asked with its own token only', async () => {
      const { groupCode, reservationNumbers } = owner().handed;
      const res = await intruder().read(
        'query ($e: Int!, $code: String!, $r: Int!) { groupCodeLink(eventId: $e, groupCode: $code, attendeeId: "A-1", registrationEventId: "R-1") editReservationLink(reservationNumber: $r) }',
        { e: owner().eventId, code: groupCode, r: reservationNumbers[0] },
      );
      expect(res.errors).toBeUndefined();
      expect(res.data).toEqual({ groupCodeLink: null, editReservationLink: null });
      expectOwnTokensOnly(intruder());
    });

    it('mutations on the other’s event, hotel, reservation and custom field are refused, and write nothing', async () => {
      const { hotelId, reservationNumbers, customFieldId } = owner().handed;
      const theirs = owner().eventId;
      const before = written();
      const mutations: [string, Record<string, unknown>][] = [
        [
          'saveEventQuestion(input: $input) { question { questionId } }',
          { eventId: theirs, questionId: 4242, question: 'Whose?', type: 'TEXT_AREA', enabled: true },
        ],
        ['createCustomField(input: $input) { customField { customFieldId } }', { name: 'Whose?', eventId: theirs }],
        [
          'setCustomFieldValue(input: $input) { value }',
          { customFieldId, value: 'theirs', reservationNumber: reservationNumbers[0] },
        ],
        [
          'setCustomFieldValue(input: $input) { value }',
          { customFieldId: intruder().handed.customFieldId, value: 'mine', reservationNumber: reservationNumbers[1] },
        ],
        [
          'recordActualizedPickup(input: $input) { stored }',
          { eventId: theirs, hotelId, nights: [{ date: '2030-01-01', rooms: 1 }] },
        ],
      ];
      for (const [field, input] of mutations) {
        const type = `${field.charAt(0).toUpperCase()}${field.slice(1, field.indexOf('('))}Input`;
        const res = await intruder().write(`mutation ($input: ${type}!) { ${field} }`, { input });
        expect(res.errors, field).toBeDefined();
        expect(res.errors![0]!.extensions?.code, field).not.toBe('INTERNAL_SERVER_ERROR');
        expect(res.data ?? null, field).toBeNull();
        expectNothingOf(owner(), res);
      }
      expect(written()).toBe(before);
      expectOwnTokensOnly(intruder());
    });
  });

  // Fault: ids of records that are not nodes (questions, group codes, custom fields) were the same for
  // both licensees: both have default questions 1 and 2, and a client caching by id across
  // licensees (an operations tool) took one licensee's question for the other's.
  it('both licensees’ default questions 1 and 2 have different ids', async () => {
    const query = '{ defaultQuestions { id questionId } }';
    const ask = (side: Side) => side.read<{ defaultQuestions: { id: string; questionId: number }[] }>(query);
    const [of1001, of2002] = await Promise.all([ask(sides[0]!), ask(sides[1]!)]);
    const numbers = (res: typeof of1001) => res.data!.defaultQuestions.map((q) => q.questionId).sort();
    expect(numbers(of1001)).toEqual(numbers(of2002));
    const ids1001 = new Set(of1001.data!.defaultQuestions.map((q) => q.id));
    expect(of2002.data!.defaultQuestions.filter((q) => ids1001.has(q.id))).toEqual([]);
  });
}

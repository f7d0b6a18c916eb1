import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/environment.ts';
import { type Emulator, startEmulator } from '../../src/emulator/server.ts';
import { createGateway, type Gateway } from '../../src/gateway.ts';
import { schemasOf } from '../../src/upstream/endpoints.ts';
import type { LazyList } from '../../src/upstream/lazy-list.ts';
import { viewConversions } from '../../src/upstream/record-view.ts';

/**
 * Records of the paged lists are views over the service's JSON: identifiers checked when a record
 * is reached, every other field converted when read, once; a value present but unreadable is an
 * error of that field alone.
 */

type Page = LazyList<Record<string, any>>;
const decodePage = (raw: unknown, timeZone = 'UTC') =>
  schemasOf('getreservation', { timeZone }).response.parse(raw) as Page;

const record = (overrides: Record<string, unknown> = {}) => ({
  reservationNumber: 700001,
  eventId: 5001,
  status: 'accepted',
  hotelId: 201,
  arrivalDate: '13-Mar-2027',
  departureDate: '16-Mar-2027',
  createdDate: '02-Jan-2027 9:15 am',
  contact: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
  rooms: [
    {
      roomId: 1,
      roomType: 'King',
      arrivalDate: '13-Mar-2027',
      guests: [{ firstName: 'Ada', lastName: 'Lovelace' }],
      nightlyRates: [{ date: '13-Mar-2027', amount: 189, currency: 'USD' }],
    },
  ],
  ...overrides,
});

function counted<T>(read: () => T): { value: T; conversions: number } {
  const before = viewConversions.count;
  const value = read();
  return { value, conversions: viewConversions.count - before };
}

describe('a record view', () => {
  it('converts a field on its first read only, and nothing that is not read', () => {
    const view = decodePage([record()]).at(0)!;
    expect(counted(() => view.status)).toEqual({ value: 'accepted', conversions: 1 });
    expect(counted(() => view.status)).toEqual({ value: 'accepted', conversions: 0 });
    expect(counted(() => view.arrivalDate)).toEqual({ value: '2027-03-13', conversions: 1 });
    // A nested object is a view too: reading it converts it, not its fields.
    const contact = counted(() => view.contact);
    expect(contact.conversions).toBe(1);
    expect(counted(() => contact.value.email)).toEqual({ value: 'ada@example.com', conversions: 1 });
    expect(view.raw).toEqual(record());
  });

  it('reads the tolerated variations as before: numeric strings, ISO dates, wrapped lists, zone-local times', () => {
    const view = decodePage(
      {
        data: [
          record({
            reservationNumber: '700002',
            hotelId: '201',
            arrivalDate: '2027-03-13',
            createdDate: '02-jan-2027 9:15 AM',
            rooms: { rooms: [{ roomId: '3', occupancy: '2', guests: { guests: [{ firstName: 7 }] } }] },
          }),
        ],
      },
      'America/New_York',
    ).at(0)!;
    expect(view.reservationNumber).toBe(700002);
    expect(view.hotelId).toBe(201);
    expect(view.arrivalDate).toBe('2027-03-13');
    expect(view.createdDate).toBe('2027-01-02T09:15:00-05:00');
    expect(view.rooms[0].roomId).toBe(3);
    expect(view.rooms[0].occupancy).toBe(2);
    expect(view.rooms[0].guests[0].firstName).toBe('7');
    expect(view.rooms[0].nightlyRates).toEqual([]);
  });

  it('makes an unreadable value an UPSTREAM_ERROR naming the field, never quoting the value; absent is null', () => {
    const view = decodePage([record({ arrivalDate: '31-Foo-2027', departureDate: undefined, label1: null })]).at(0)!;
    expect(() => view.arrivalDate).toThrowError(/arrivalDate.*not a date like 13-Mar-2027/);
    let thrown: unknown;
    try {
      view.arrivalDate;
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: 'UPSTREAM_ERROR' });
    expect(String((thrown as Error).message)).not.toContain('Foo');
    expect(view.departureDate).toBeNull();
    expect(view.label1).toBeNull();
    expect(view.status).toBe('accepted');
    // What a change feed sends on: every field, the unreadable one as null.
    expect(JSON.parse(JSON.stringify(view))).toMatchObject({ arrivalDate: null, status: 'accepted', raw: {} });
  });

  it('skips a record without a readable number, keeping the positions of the others', () => {
    const page = decodePage([record(), record({ reservationNumber: 'x' }), record({ reservationNumber: 700003 })]);
    expect(page.at(1)).toBeNull();
    expect(page.slice().map((r) => r.reservationNumber)).toEqual([700001, 700003]);
  });

  it('drops the list items that are not objects or lack their identifier, as the table’s lists do', () => {
    const view = decodePage([
      record({
        customFields: [{ customFieldId: 4, name: 'Badge', value: 'VIP' }, { name: 'no id' }, 'text'],
        rooms: [null, { roomId: 2 }],
      }),
    ]).at(0)!;
    expect(view.customFields.map((f: { customFieldId: number }) => f.customFieldId)).toEqual([4]);
    expect(view.rooms.map((r: { roomId: number }) => r.roomId)).toEqual([2]);
  });
});

describe('an attendee answer', () => {
  it('is a view too: its question id checked when reached, its time converted when read', () => {
    const page = schemasOf('getattendeeanswers', { timeZone: 'UTC' }).response.parse([
      { reservationNumber: '700001', questionId: 7, answer: 1, answeredDate: '02-Jan-2027 9:20 am' },
      { reservationNumber: 700002, answer: 'no question id' },
      { reservationNumber: 700003, questionId: 7, answeredDate: 'yesterday' },
    ]) as Page;
    expect(page.at(1)).toBeNull();
    expect(page.at(0)!.reservationNumber).toBe(700001);
    expect(page.at(0)!.answer).toBe('1');
    expect(page.at(0)!.answeredDate).toBe('2027-01-02T09:20:00+00:00');
    expect(() => page.at(2)!.answeredDate).toThrowError(/answeredDate.*not a time like/);
  });
});

/** A proxy before the emulator that edits the records of getreservation's answers. */
let emulator: Emulator;
let proxy: Server;
let gateway: Gateway;
let edit: (records: Record<string, any>[]) => void = () => {};

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, rateLimit: false });
  proxy = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await fetch(`${emulator.url}${req.url}`, {
      method: req.method,
      headers: { 'content-type': req.headers['content-type'] ?? '', 'user-agent': req.headers['user-agent'] ?? '' },
      body: req.method === 'GET' ? undefined : Buffer.concat(chunks),
    });
    let text = await answer.text();
    if (answer.status === 200 && req.url?.endsWith('/getreservation')) {
      const records = JSON.parse(text) as Record<string, any>[];
      edit(records);
      text = JSON.stringify(records);
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(text);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  // The response cache adds `id` to each object it may tag an answer by, and a reservation's id
  // reads its eventId: off here, so that the conversions counted are the query's own.
  gateway = createGateway({ ...loadConfig({ LOG_LEVEL: 'silent', RESPONSE_CACHE: 'off' }), upstreamBaseUrl: url });
});

afterAll(async () => {
  await gateway.close();
  await new Promise((resolve) => proxy.close(resolve));
  await emulator.close();
});

beforeEach(async () => {
  edit = () => {};
  await gateway.upstream.clearCache();
  gateway.clearResponseCache();
});

async function exec(query: string) {
  const res = await gateway.yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await res.json()) as {
    data?: { event: { reservations: { edges: { node: Record<string, any> }[] } } };
    errors?: { message: string; path: (string | number)[]; extensions: { code: string } }[];
  };
}

describe('a query over a page of 1000 reservations', () => {
  it('converts the fields it selects, for the records of its window only', async () => {
    const before = viewConversions.count;
    const answer = await exec(
      '{ event(eventId: 5001) { reservations(first: 1000) { edges { node { status arrivalDate } } } } }',
    );
    expect(answer.errors).toBeUndefined();
    const edges = answer.data!.event.reservations.edges;
    expect(edges).toHaveLength(1000);
    expect(edges[0]!.node.arrivalDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(viewConversions.count - before).toBe(2 * 1000);
  });

  it('converts nothing of a nested object but what is selected of it', async () => {
    const before = viewConversions.count;
    const answer = await exec(
      '{ event(eventId: 5001) { reservations(first: 10) { edges { node { contact { email } } } } } }',
    );
    expect(answer.data!.event.reservations.edges).toHaveLength(10);
    // contact, then its email: rooms, dates and the rest of the 1000 records are never read.
    expect(viewConversions.count - before).toBe(2 * 10);
  });

  it('answers an unreadable value as an error of that field of that record, and serves the rest', async () => {
    edit = (records) => {
      records[2]!.arrivalDate = '31-Foo-2027';
      records[4]!.rooms[0].departureDate = 'soon';
      delete records[5]!.arrivalDate;
      // Where the schema declares a field non-null, an error would blank the whole page instead:
      // the list reads as empty, and the event is the one the request named.
      records[6]!.rooms = 'none';
      records[7]!.eventId = 'five thousand';
    };
    const answer = await exec(
      '{ event(eventId: 5001) { reservations(first: 8) { edges { node { reservationNumber eventId arrivalDate rooms { departureDate } } } } } }',
    );
    const nodes = answer.data!.event.reservations.edges.map((e) => e.node);
    expect(nodes).toHaveLength(8);
    expect(nodes[2]!.arrivalDate).toBeNull();
    expect(nodes[2]!.reservationNumber).toEqual(expect.any(Number));
    expect(nodes[4]!.rooms[0].departureDate).toBeNull();
    expect(nodes[5]!.arrivalDate).toBeNull();
    expect(nodes[6]!.rooms).toEqual([]);
    expect(nodes[7]!.eventId).toBe(5001);
    for (const i of [0, 1, 3, 4, 6, 7]) expect(nodes[i]!.arrivalDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(answer.errors).toHaveLength(2);
    expect(answer.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: ['event', 'reservations', 'edges', 2, 'node', 'arrivalDate'],
          extensions: { code: 'UPSTREAM_ERROR' },
          message: expect.stringContaining('arrivalDate'),
        }),
        expect.objectContaining({
          path: ['event', 'reservations', 'edges', 4, 'node', 'rooms', 0, 'departureDate'],
          extensions: { code: 'UPSTREAM_ERROR' },
          message: expect.stringContaining('departureDate'),
        }),
      ]),
    );
    expect(JSON.stringify(answer.errors)).not.toContain('Foo');
    expect(JSON.stringify(answer.errors)).not.toContain('soon');
  });
});

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../src/emulator/dates.ts';
import type { ReservationRecord } from '../../src/emulator/model.ts';
import { type Rest, startRest } from '../helpers/rest.ts';

let rest: Rest;
beforeAll(async () => {
  rest = await startRest({ rateLimit: false });
});
afterAll(() => rest.emulator.close());
beforeEach(() => rest.reset());

const store = () => rest.emulator.state.store;
const numbers = (list: { reservationNumber: number }[]) => list.map((r) => r.reservationNumber);

describe('getevent', () => {
  it('answers the event object with ISO 8601 dates and offsets', async () => {
    const res = await rest.call('getevent', { eventId: 5001 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual([
      'address',
      'city',
      'cutOffDate',
      'endDate',
      'eventId',
      'name',
      'startDate',
      'state',
      'zip',
    ]);
    expect(res.body.startDate).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
  });
  it.each([
    [{ eventId: 999 }, 404, 'NOT_FOUND', 'eventId'],
    [{ eventId: 'abc' }, 400, 'INVALID_PARAMETER', 'eventId'],
    [{}, 400, 'MISSING_PARAMETER', 'eventId'],
  ])('refuses %o', async (params, status, code, field) => {
    const res = await rest.call('getevent', params);
    expect([res.status, res.body.error.code, res.body.error.field]).toEqual([status, code, field]);
  });
});

describe('every endpoint that takes an event', () => {
  it.each([
    ['getevent', 'v102'],
    ['getgroupcodes', 'v102'],
    ['getpickup', 'v102'],
    ['gethotels', 'v1'],
    ['getshoppingviewhotels', 'v102'],
    ['getreservation', 'v101'],
    ['getreservationpagecount', 'v102'],
    ['geteventquestions', 'v102'],
    ['getattendeeanswers', 'v102'],
    ['getattendeeanswerspagecount', 'v101'],
    ['getcustomfields', 'v102'],
  ])(
    '%s answers for an event of the licensee, 404 for another licensee’s, 400 for a malformed id',
    async (endpoint, version) => {
      expect((await rest.call(endpoint, { eventId: 5002 }, { version })).status).toBe(200);
      const other = await rest.call(endpoint, { eventId: 6001 }, { version });
      expect([other.status, other.body.error.code, other.body.error.field]).toEqual([404, 'NOT_FOUND', 'eventId']);
      const bad = await rest.call(endpoint, { eventId: '50x1' }, { version });
      expect([bad.status, bad.body.error.code, bad.body.error.field]).toEqual([400, 'INVALID_PARAMETER', 'eventId']);
    },
  );
});

describe('getgroupcodes', () => {
  it('lists the group codes of the event with dd-Mon-yyyy dates', async () => {
    const res = await rest.call('getgroupcodes', { eventId: 5001 });
    expect(res.body.length).toBeGreaterThan(3);
    expect(res.body[0]).toMatchObject({
      groupCode: expect.any(String),
      hotelId: expect.any(Number),
      subBlockId: expect.any(Number),
      rooms: expect.any(Number),
    });
    expect(res.body[0].startDate).toMatch(/^\d{2}-[A-Z][a-z]{2}-\d{4}$/);
    expect((await rest.call('getgroupcodes', { eventId: 6001 })).status).toBe(404);
  });
});

describe('getpickup and posteventhotelactualized', () => {
  it('reports block and pickup per hotel, room type and night, pickup counting active rooms of live reservations', async () => {
    const res = await rest.call('getpickup', { eventId: 5002 });
    expect(res.status).toBe(200);
    const row = res.body.find((r: any) => r.pickup > 0);
    let expected = 0;
    for (const r of store().reservationsByEvent.get(5002)!) {
      if ((r.status !== 'new' && r.status !== 'accepted') || r.hotelId !== row.hotelId) continue;
      for (const room of r.rooms) {
        const nights = room.nightlyRates.map((n) => n.day);
        if (
          room.status === 'active' &&
          room.roomTypeId === row.roomTypeId &&
          nights.some((d) => formatDay(d) === row.date)
        )
          expected++;
      }
    }
    expect(row.pickup).toBe(expected);
    expect(row.block).toBeGreaterThanOrEqual(row.pickup);
    expect((await rest.call('getpickup', { eventId: 5002 }, { version: 'v101' })).status).toBe(404);
  });

  it('stores actual pickup from a JSON body and replaces a later post for the same night', async () => {
    const hotelId = store().hotelsByEvent.get(5001)![0]!.hotelId;
    const post = (actualized: unknown) =>
      rest.call(
        'posteventhotelactualized',
        { eventId: 5001, hotelId, actualized: actualized as never },
        { json: true },
      );
    const first = await post([
      { date: '13-Mar-2027', rooms: 35 },
      { date: '14-mar-2027', rooms: 30 },
    ]);
    expect(first.body).toEqual({ success: true, stored: 2 });
    await post([{ date: '13-Mar-2027', rooms: 12 }]);
    expect(store().actualized.get(`5001:${hotelId}:${Date.UTC(2027, 2, 13) / 86_400_000}`)).toBe(12);
  });

  it.each([
    [[{ date: '2027-03-13', rooms: 1 }], 400, 'actualized'],
    [[{ date: '30-Feb-2027', rooms: 1 }], 400, 'actualized'],
    [[{ date: '13-Mar-2027', rooms: -1 }], 400, 'actualized'],
    [[], 400, 'actualized'],
    [Array.from({ length: 367 }, () => ({ date: '13-Mar-2027', rooms: 1 })), 400, 'actualized'],
    ['not json', 400, 'actualized'],
  ])('refuses actualized %#', async (actualized, status, field) => {
    const hotelId = store().hotelsByEvent.get(5001)![0]!.hotelId;
    const res = await rest.call(
      'posteventhotelactualized',
      { eventId: 5001, hotelId, actualized: actualized as never },
      { json: true },
    );
    expect([res.status, res.body.error.field]).toEqual([status, field]);
  });

  // Faults: rooms of 1e300 were accepted, and so was the same night twice.
  it.each([
    [
      [{ date: '13-Mar-2027', rooms: 1e300 }],
      'actualized[0].rooms must be a whole number of rooms from 0 to 2147483647',
    ],
    [
      [{ date: '13-Mar-2027', rooms: '99999999999999999999' }],
      'actualized[0].rooms must be a whole number of rooms from 0 to 2147483647',
    ],
    [
      [
        { date: '13-Mar-2027', rooms: 3 },
        { date: '13-mar-2027', rooms: 4 },
      ],
      'actualized[1].date 13-Mar-2027 is given twice',
    ],
    [
      [{ date: '01-Jun-0999', rooms: 3 }],
      'actualized[0].date must be a date like 13-Mar-2027, in the years 1000 to 9999',
    ],
  ])('refuses actualized %j and stores nothing', async (actualized, message) => {
    const hotelId = store().hotelsByEvent.get(5001)![0]!.hotelId;
    const res = await rest.call(
      'posteventhotelactualized',
      { eventId: 5001, hotelId, actualized: actualized as never },
      { json: true },
    );
    expect([res.status, res.body.error]).toEqual([400, { code: 'INVALID_PARAMETER', field: 'actualized', message }]);
    expect(store().actualized.size).toBe(0);
  });

  it('refuses a hotel of another event with 404', async () => {
    const other = store().hotelsByEvent.get(5002)![0]!.hotelId;
    const res = await rest.call(
      'posteventhotelactualized',
      { eventId: 5001, hotelId: other, actualized: [{ date: '13-Mar-2027', rooms: 1 }] as never },
      { json: true },
    );
    expect([res.status, res.body.error.field]).toEqual([404, 'hotelId']);
  });
});

import { formatDay } from '../../src/emulator/dates.ts';

describe('gethotels', () => {
  const hotels = () => store().hotelsByEvent.get(5001)!;
  it('lists the hotels of the event, partnerHotelId only with partnerview', async () => {
    const res = await rest.call('gethotels', { eventId: 5001 });
    expect(res.body).toHaveLength(hotels().length);
    expect(res.body[0].partnerHotelId).toBeUndefined();
    const partner = await rest.call('gethotels', { eventId: 5001, partnerview: true });
    expect(partner.body[0].partnerHotelId).toBe(`PX-${partner.body[0].hotelId}`);
  });
  it.each([
    ['hotelId', (h: any) => h.hotelId, (h: any, v: any) => h.hotelId === v],
    [
      'hotelName',
      (h: any) => h.name.slice(2, 7).toUpperCase(),
      (h: any, v: string) => h.name.toLowerCase().includes(v.toLowerCase()),
    ],
    ['city', (h: any) => h.city.toLowerCase(), (h: any, v: string) => h.city.toLowerCase() === v],
    ['state', (h: any) => h.state, (h: any, v: string) => h.state === v],
    ['status', () => 'disabled', (h: any) => h.status === 'disabled'],
  ])('filters by %s', async (filter, value, keep) => {
    const v = value(hotels()[3]);
    const res = await rest.call('gethotels', { eventId: 5001, [filter]: v });
    const expected = hotels()
      .filter((h) => keep(h, v))
      .map((h) => h.hotelId);
    expect(expected.length).toBeGreaterThan(0);
    expect(res.body.map((h: any) => h.hotelId)).toEqual(expected);
  });
  it('refuses an unknown status', async () => {
    const res = await rest.call('gethotels', { eventId: 5001, status: 'closed' });
    expect([res.status, res.body.error.field]).toEqual([400, 'status']);
  });
});

describe('getshoppingviewhotels', () => {
  const hotels = () => store().hotelsByEvent.get(5001)!;
  const now = () => rest.emulator.state.clock.now();
  it('lists only shopping-view hotels, past cut-off ones only on request', async () => {
    const res = await rest.call('getshoppingviewhotels', { eventId: 5001 });
    const expected = hotels()
      .filter((h) => h.shoppingView && h.cutOffMs > now())
      .map((h) => h.hotelId);
    expect(res.body.map((h: any) => h.hotelId)).toEqual(expected);
    expect(res.body[0].rooms).toBeUndefined();
    const all = await rest.call('getshoppingviewhotels', { eventId: 5001, showPastCutoff: true });
    const withPast = hotels()
      .filter((h) => h.shoppingView)
      .map((h) => h.hotelId);
    expect(all.body.map((h: any) => h.hotelId)).toEqual(withPast);
    expect(withPast.length).toBeGreaterThan(expected.length);
    expect(all.body.some((h: any) => h.pastCutoff)).toBe(true);
  });
  it('with dates, keeps hotels with main-block inventory every night, with rooms and rates', async () => {
    const res = await rest.call('getshoppingviewhotels', {
      eventId: 5001,
      checkInDate: '2027-03-11',
      checkOutDate: '2027-03-13',
    });
    const noDates = await rest.call('getshoppingviewhotels', { eventId: 5001 });
    expect(res.body.length).toBeGreaterThan(0);
    expect(res.body.length).toBeLessThan(noDates.body.length); // the sold-out hotel is gone
    for (const hotel of res.body) {
      expect(hotel.rooms.length).toBeGreaterThan(0);
      for (const room of hotel.rooms) {
        expect(room.available).toBeGreaterThan(0);
        expect(room.rates.map((r: any) => r.date)).toEqual(['11-Mar-2027', '12-Mar-2027']);
      }
    }
    const simple = await rest.call('getshoppingviewhotels', {
      eventId: 5001,
      checkInDate: '2027-03-11',
      checkOutDate: '2027-03-13',
      scope: 'simple',
    });
    expect(Object.keys(simple.body[0]).sort()).toEqual(['hotelId', 'lowestRate', 'name', 'pastCutoff']);
    const lowest = Math.min(...res.body[0].rooms.flatMap((r: any) => r.rates.map((x: any) => x.amount)));
    expect(simple.body[0].lowestRate).toEqual({ amount: lowest, currency: 'USD' });
  });
  it.each([
    [{ checkInDate: '2027-03-11' }, 'checkOutDate'],
    [{ checkOutDate: '2027-03-11' }, 'checkInDate'],
    [{ checkInDate: '2027-03-13', checkOutDate: '2027-03-11' }, 'checkOutDate'],
    [{ checkInDate: '11-Mar-2027', checkOutDate: '2027-03-13' }, 'checkInDate'],
    [{ scope: 'wide' }, 'scope'],
    [{ showPastCutoff: 'yes' }, 'showPastCutoff'],
    // Fault: years outside 1000-9999 were read (0999) or went on as another century.
    [{ checkInDate: '0999-06-01', checkOutDate: '2027-03-13' }, 'checkInDate'],
    [{ checkInDate: '2027-03-11', checkOutDate: '0099-12-31' }, 'checkOutDate'],
    [{ checkInDate: '0100-01-01', checkOutDate: '9999-12-31' }, 'checkInDate'],
  ])('refuses %o', async (params, field) => {
    const res = await rest.call('getshoppingviewhotels', { eventId: 5001, ...params });
    expect([res.status, res.body.error.field]).toEqual([400, field]);
  });
  // Fault: 0100-01-01..9999-12-31 ran 80 s at 1.9 GB and blocked every other request.
  it('refuses a stay over 366 nights naming checkOutDate, and serves one of 366', async () => {
    const stay = (checkInDate: string, checkOutDate: string) =>
      rest.call('getshoppingviewhotels', { eventId: 5001, checkInDate, checkOutDate });
    const huge = await stay('1000-01-01', '9999-12-31');
    expect([huge.status, huge.body.error.code, huge.body.error.field]).toEqual([
      400,
      'INVALID_PARAMETER',
      'checkOutDate',
    ]);
    const over = await stay('2027-01-01', '2028-01-03'); // 367 nights
    expect([over.status, over.body.error.field]).toEqual([400, 'checkOutDate']);
    expect((await stay('2027-01-01', '2028-01-02')).status).toBe(200); // 366 nights
  });
});

describe('getreservation and getreservationpagecount', () => {
  it('pages the large event by 1000 in reservation-number order, [] past the last page', async () => {
    const all = store().reservationsByEvent.get(5001)!;
    const count = (await rest.call('getreservationpagecount', { eventId: 5001 })).body.pageCount;
    expect(count).toBe(Math.ceil(all.length / 1000));
    expect(count).toBeGreaterThanOrEqual(26);
    const first = await rest.call('getreservation', { eventId: 5001 });
    expect(numbers(first.body)).toEqual(numbers(all.slice(0, 1000)));
    const last = await rest.call('getreservation', { eventId: 5001, page: count });
    expect(numbers(last.body)).toEqual(numbers(all.slice((count - 1) * 1000)));
    expect((await rest.call('getreservation', { eventId: 5001, page: count + 1 })).body).toEqual([]);
  });

  it('exactly 1000 records make one page, 1001 two', async () => {
    expect(store().reservationsByEvent.get(5002)).toHaveLength(1000);
    expect(store().reservationsByEvent.get(5003)).toHaveLength(1001);
    expect((await rest.call('getreservationpagecount', { eventId: 5002 })).body).toEqual({ pageCount: 1 });
    expect((await rest.call('getreservation', { eventId: 5002 })).body).toHaveLength(1000);
    expect((await rest.call('getreservation', { eventId: 5002, page: 2 })).body).toEqual([]);
    expect((await rest.call('getreservationpagecount', { eventId: 5003 })).body).toEqual({ pageCount: 2 });
    expect((await rest.call('getreservation', { eventId: 5003, page: 2 })).body).toHaveLength(1);
    expect((await rest.call('getreservationpagecount', { eventId: 5002, reservationNumber: 1 })).body).toEqual({
      pageCount: 0,
    });
  });

  it.each([0, -1, 'two'])('refuses page %s', async (page) => {
    const res = await rest.call('getreservation', { eventId: 5002, page });
    expect([res.status, res.body.error.field]).toEqual([400, 'page']);
  });

  const pickReservation = () =>
    store()
      .reservationsByEvent.get(5002)!
      .find((r) => r.groupCode && r.attendeeId && r.confirmationNumber && r.label1 && r.rooms.length > 1) ??
    store()
      .reservationsByEvent.get(5002)!
      .find((r) => r.groupCode && r.attendeeId && r.confirmationNumber && r.label1)!;
  const FILTERS: [string, (r: ReservationRecord) => string | number, (r: ReservationRecord, v: any) => boolean][] = [
    ['reservationNumber', (r) => r.reservationNumber, (r, v) => r.reservationNumber === v],
    ['hotelId', (r) => r.hotelId, (r, v) => r.hotelId === v],
    ['contactEmail', (r) => r.contact.email.toUpperCase(), (r, v) => r.contact.email.toLowerCase() === v.toLowerCase()],
    ['contactLastName', (r) => r.contact.lastName.toLowerCase(), (r, v) => r.contact.lastName.toLowerCase() === v],
    [
      'guestLastName',
      (r) => r.rooms[0]!.guests.at(-1)!.lastName,
      (r, v) => r.rooms.some((room) => room.guests.some((g) => g.lastName === v)),
    ],
    ['confirmationNumber', (r) => r.confirmationNumber!, (r, v) => r.confirmationNumber === v],
    ['groupCode', (r) => r.groupCode!.toLowerCase(), (r, v) => r.groupCode?.toLowerCase() === v],
    ['reservationStatus', () => 'cancelled', (r) => r.status === 'cancelled'],
    ['roomStatus', () => 'cancelled', (r) => r.rooms.some((room) => room.status === 'cancelled')],
    ['companyName', (r) => r.contact.companyName, (r, v) => r.contact.companyName === v],
    ['label1', (r) => r.label1!, (r, v) => r.label1 === v],
    ['label2', () => 'CC-120', (r, v) => r.label2 === v],
    ['attendeeId', (r) => r.attendeeId!, (r, v) => r.attendeeId === v],
  ];
  it.each(FILTERS)('filters by %s, and the page count agrees', async (name, value, keep) => {
    const v = value(pickReservation());
    const expected = store()
      .reservationsByEvent.get(5002)!
      .filter((r) => keep(r, v));
    expect(expected.length).toBeGreaterThan(0);
    const res = await rest.call('getreservation', { eventId: 5002, [name]: v });
    expect(numbers(res.body)).toEqual(numbers(expected));
    const count = await rest.call('getreservationpagecount', { eventId: 5002, [name]: v });
    expect(count.body.pageCount).toBe(Math.ceil(expected.length / 1000));
  });

  it('combines filters', async () => {
    const r = pickReservation();
    const res = await rest.call('getreservation', { eventId: 5002, hotelId: r.hotelId, reservationStatus: r.status });
    const expected = store()
      .reservationsByEvent.get(5002)!
      .filter((x) => x.hotelId === r.hotelId && x.status === r.status);
    expect(numbers(res.body)).toEqual(numbers(expected));
  });

  it('keeps reservations modified at or after the given minute, in the licensee’s zone', async () => {
    const all = store().reservationsByEvent.get(6001)!;
    const pivot = [...all].sort((a, b) => a.modifiedMs - b.modifiedMs)[Math.floor(all.length / 2)]!;
    const minute = Math.floor(pivot.modifiedMs / 60_000) * 60_000;
    const text = formatTimestamp(minute, 'America/New_York');
    const res = await rest.call('getreservation', { eventId: 6001, modifiedAfterDate: text }, { licensee: '2002' });
    const expected = all.filter((r) => r.modifiedMs >= minute);
    expect(numbers(res.body)).toEqual(numbers(expected));
    expect(res.body.find((r: any) => r.reservationNumber === pivot.reservationNumber).modifiedDate).toBe(text);
  });

  it.each([
    ['modifiedAfterDate', '2027-01-05 16:02'],
    ['modifiedAfterDate', '05-Jan-2027 13:02 pm'],
    // Fault: a year outside 1000-9999 was read rather than refused.
    ['modifiedAfterDate', '01-Jun-0999 12:00 am'],
    ['modifiedAfterDate', '31-Dec-0099 11:59 pm'],
    ['reservationStatus', 'open'],
    ['roomStatus', 'gone'],
    ['hotelId', 'x'],
    ['contactEmail', 'x'.repeat(256)],
  ])('refuses %s=%s', async (name, value) => {
    const res = await rest.call('getreservation', { eventId: 5002, [name]: value });
    expect([res.status, res.body.error.code, res.body.error.field]).toEqual([400, 'INVALID_PARAMETER', name]);
  });

  it('adds each detail group only under its flag', async () => {
    const r = pickReservation();
    const plain = (await rest.call('getreservation', { eventId: 5002, reservationNumber: r.reservationNumber }))
      .body[0];
    expect(Object.keys(plain.contact).sort()).toEqual(['email', 'firstName', 'lastName', 'phone']);
    for (const key of ['event', 'hotel', 'subBlock', 'customFields', 'partnerHotelId'])
      expect(plain[key]).toBeUndefined();
    expect(plain.arrivalDate).toMatch(/^\d{2}-[A-Z][a-z]{2}-\d{4}$/);
    expect(plain.modifiedDate).toMatch(/^\d{2}-[A-Z][a-z]{2}-\d{4} \d{1,2}:\d{2} (am|pm)$/);
    const full = (
      await rest.call('getreservation', {
        eventId: 5002,
        reservationNumber: r.reservationNumber,
        fullContactInfo: true,
        detailedEventInfo: true,
        detailedHotelInfo: true,
        detailedSubBlockInfo: true,
        customField: true,
        partnerview: true,
      })
    ).body[0];
    expect(full.contact).toMatchObject({
      companyName: r.contact.companyName,
      country: r.contact.country,
      address: r.contact.address,
    });
    expect(full.event.eventId).toBe(5002);
    expect(full.hotel.hotelId).toBe(r.hotelId);
    expect(full.subBlock).toMatchObject({ groupCode: r.groupCode, subBlockId: r.subBlockId });
    expect(full.customFields).toEqual([]);
    expect(full.partnerHotelId).toBe(`PX-${r.hotelId}`);
  });
});

describe('questions and answers', () => {
  it('registers text and select-box questions, replaces by (eventId, questionId), lists the event’s then the defaults', async () => {
    expect(
      (
        await rest.call('posteventquestion', {
          eventId: 5001,
          questionId: 20,
          question: 'Arrival time?',
          type: 1,
          enabled: true,
        })
      ).body,
    ).toEqual({ success: true, eventId: 5001, questionId: 20 });
    await rest.call('posteventquestion', {
      eventId: 5001,
      questionId: 21,
      question: 'Gala?',
      type: 2,
      options: JSON.stringify({ 1: 'Yes', 0: 'No' }),
      enabled: true,
    });
    await rest.call('posteventquestion', {
      eventId: 5001,
      questionId: 20,
      question: 'Arrival time, roughly?',
      type: 1,
      enabled: false,
    });
    const list = (await rest.call('geteventquestions', { eventId: 5001 })).body;
    const ids = list.map((q: any) => `${q.eventId}/${q.questionId}`);
    expect(ids).toEqual(['5001/7', '5001/8', '5001/9', '5001/20', '5001/21', '0/1', '0/2']);
    expect(list.find((q: any) => q.questionId === 20)).toEqual({
      eventId: 5001,
      questionId: 20,
      question: 'Arrival time, roughly?',
      type: 1,
      options: null,
      enabled: false,
    });
    expect(list.find((q: any) => q.questionId === 21).options).toEqual({ 1: 'Yes', 0: 'No' });
  });
  // Faults: an option named __proto__ was silently dropped, and options came back reordered
  // (integer-like values first), whether sent as a form field or inside a JSON body.
  it.each([
    ['a form field', false],
    ['a JSON body', true],
  ])('keeps every option, __proto__ included, in the order given, through %s', async (_how, json) => {
    const options = '{"2":"Maybe","__proto__":"Ask me later","1":"Yes","0":"No"}';
    const sent = json
      ? await fetch(`${rest.url}/api/v102/posteventquestion`, {
          method: 'POST',
          headers: { 'user-agent': 't', 'content-type': 'application/json' },
          body: `{"token":"${await rest.token()}","eventId":5001,"questionId":22,"question":"Gala?","type":2,"enabled":true,"options":${options}}`,
        }).then((res) => res.json())
      : (
          await rest.call('posteventquestion', {
            eventId: 5001,
            questionId: 22,
            question: 'Gala?',
            type: 2,
            options,
            enabled: true,
          })
        ).body;
    expect(sent).toEqual({ success: true, eventId: 5001, questionId: 22 });
    const text = await (
      await fetch(`${rest.url}/api/v102/geteventquestions`, {
        method: 'POST',
        headers: { 'user-agent': 't', 'content-type': 'application/x-www-form-urlencoded' },
        body: `token=${await rest.token()}&eventId=5001`,
      })
    ).text();
    expect(text).toContain(`"questionId":22,"question":"Gala?","type":2,"options":${options},"enabled":true}`);
  });
  it('keeps a __proto__ option under the numeric-strings variation too', async () => {
    await rest.call('posteventquestion', {
      eventId: 5001,
      questionId: 23,
      question: 'Gala?',
      type: 2,
      options: '{"__proto__":"Later","1":"Yes"}',
      enabled: true,
    });
    await rest.control('variations', { numericStrings: true });
    const list = (await rest.call('geteventquestions', { eventId: 5001 })).body;
    expect(Object.entries(list.find((q: any) => q.questionId === '23').options)).toEqual([
      ['1', 'Yes'],
      ['__proto__', 'Later'],
    ]);
  });
  it('eventId 0 registers and lists the default questions only', async () => {
    await rest.call('posteventquestion', {
      eventId: 0,
      questionId: 3,
      question: 'Newsletter?',
      type: 2,
      options: '{"1":"Yes"}',
      enabled: true,
    });
    const list = (await rest.call('geteventquestions', { eventId: 0 })).body;
    expect(list.map((q: any) => q.questionId)).toEqual([1, 2, 3]);
    expect(list.every((q: any) => q.eventId === 0)).toBe(true);
  });
  it.each([
    [{ type: 2 }, 400, 'MISSING_PARAMETER', 'options'],
    [{ type: 2, options: '[1,2]' }, 400, 'INVALID_PARAMETER', 'options'],
    [{ type: 2, options: '{"1":' }, 400, 'INVALID_PARAMETER', 'options'],
    [{ type: 2, options: JSON.stringify({ 1: 'x'.repeat(101) }) }, 400, 'INVALID_PARAMETER', 'options'],
    [
      { type: 2, options: JSON.stringify(Object.fromEntries(Array.from({ length: 51 }, (_, i) => [i, 'x']))) },
      400,
      'INVALID_PARAMETER',
      'options',
    ],
    [{ type: 3 }, 400, 'INVALID_PARAMETER', 'type'],
    [{ type: 1, question: 'x'.repeat(1001) }, 400, 'INVALID_PARAMETER', 'question'],
    [{ type: 1, enabled: 'maybe' }, 400, 'INVALID_PARAMETER', 'enabled'],
    [{ type: 1, eventId: 6001 }, 404, 'NOT_FOUND', 'eventId'],
  ])('refuses %o', async (params, status, code, field) => {
    const res = await rest.call('posteventquestion', {
      eventId: 5001,
      questionId: 30,
      question: 'Q?',
      enabled: true,
      ...params,
    });
    expect([res.status, res.body.error.code, res.body.error.field]).toEqual([status, code, field]);
  });
  it('pages the answers by 1000 ordered by reservation then question, with a page count that agrees', async () => {
    const count = (await rest.call('getattendeeanswerspagecount', { eventId: 5001 })).body.pageCount;
    const total = store().answersOf(5001).length;
    expect(total).toBeGreaterThanOrEqual(2500);
    expect(count).toBe(Math.ceil(total / 1000));
    const pages = [];
    for (let page = 1; page <= count + 1; page++)
      pages.push((await rest.call('getattendeeanswers', { eventId: 5001, page })).body);
    expect(pages.at(-1)).toEqual([]);
    const answers = pages.flat();
    expect(answers).toHaveLength(total);
    const keys = answers.map((a: any) => a.reservationNumber * 100 + a.questionId);
    expect(keys).toEqual([...keys].sort((a, b) => a - b));
    expect(answers[0]).toMatchObject({
      eventId: 5001,
      question: expect.any(String),
      answeredDate: expect.stringMatching(/ (am|pm)$/),
    });
    expect((await rest.call('getattendeeanswers', { eventId: 6001 })).status).toBe(404);
  });
});

describe('custom fields', () => {
  it('creates fields scoped to an event or not, and lists them with or without eventId', async () => {
    const scoped = (await rest.call('postcustomfield', { name: 'Shuttle', eventId: 5002 })).body;
    const open = (await rest.call('postcustomfield', { name: 'Shuttle' })).body;
    expect(scoped).toMatchObject({ name: 'Shuttle', eventId: 5002 });
    expect(open.eventId).toBeNull();
    expect(open.customFieldId).not.toBe(scoped.customFieldId); // not idempotent
    const forEvent = (await rest.call('getcustomfields', { eventId: 5002 })).body;
    expect(forEvent.map((f: any) => f.customFieldId)).toEqual([scoped.customFieldId]);
    const all = (await rest.call('getcustomfields')).body;
    expect(all.map((f: any) => f.customFieldId)).toEqual(
      expect.arrayContaining([1, 2, scoped.customFieldId, open.customFieldId]),
    );
    expect(all.some((f: any) => f.customFieldId === 3)).toBe(false); // another licensee's
    expect((await rest.call('postcustomfield', {})).body.error.field).toBe('name');
    expect((await rest.call('postcustomfield', { name: 'x', eventId: 6001 })).status).toBe(404);
  });

  it('sets values on a reservation or an attendee, shown under customField', async () => {
    const r = store()
      .reservationsByEvent.get(5002)!
      .find((x) => x.attendeeId)!;
    expect(
      (await rest.call('postcustomfieldvalue', { customFieldId: 2, value: 'CC-9', reservationId: r.reservationNumber }))
        .body,
    ).toEqual({ success: true });
    const field = (await rest.call('postcustomfield', { name: 'Diet' })).body;
    await rest.call('postcustomfieldvalue', {
      customFieldId: field.customFieldId,
      value: 'Vegan',
      attendeeId: r.attendeeId!,
      registrationEventId: r.registrationEventId!,
    });
    const res = await rest.call('getreservation', {
      eventId: 5002,
      reservationNumber: r.reservationNumber,
      customField: true,
    });
    expect(res.body[0].customFields).toEqual([
      { customFieldId: 2, name: 'Cost center', value: 'CC-9' },
      { customFieldId: field.customFieldId, name: 'Diet', value: 'Vegan' },
    ]);
  });

  // Fault: field 1 (restricted to event 5001) took a value through an attendee of event 5002,
  // which then showed on that event's reservation.
  it('refuses a value for a field of another event through an attendee booked elsewhere, as through reservationId', async () => {
    const elsewhere = store()
      .reservationsByEvent.get(5002)!
      .find((x) => x.attendeeId)!;
    const res = await rest.call('postcustomfieldvalue', {
      customFieldId: 1,
      value: 'Speaker',
      attendeeId: elsewhere.attendeeId!,
      registrationEventId: elsewhere.registrationEventId!,
    });
    expect([res.status, res.body.error]).toEqual([
      400,
      { code: 'INVALID_PARAMETER', field: 'customFieldId', message: 'custom field 1 is restricted to event 5001' },
    ]);
    const shown = await rest.call('getreservation', {
      eventId: 5002,
      reservationNumber: elsewhere.reservationNumber,
      customField: true,
    });
    expect(shown.body[0].customFields.map((f: any) => f.customFieldId)).not.toContain(1);

    const here = store()
      .reservationsByEvent.get(5001)!
      .find((x) => x.attendeeId && !store().customFieldValues.has(`1|r|${x.reservationNumber}`))!;
    const ok = await rest.call('postcustomfieldvalue', {
      customFieldId: 1,
      value: 'Speaker',
      attendeeId: here.attendeeId!,
      registrationEventId: here.registrationEventId!,
    });
    expect(ok.body).toEqual({ success: true });
    const mine = await rest.call('getreservation', {
      eventId: 5001,
      reservationNumber: here.reservationNumber,
      customField: true,
    });
    expect(mine.body[0].customFields).toContainEqual({ customFieldId: 1, name: 'Badge type', value: 'Speaker' });
  });

  it('shows an attendee value of a restricted field only on reservations of its event', async () => {
    // The attendee has not booked yet, so the value is taken; it then books in event 5002.
    expect(
      (
        await rest.call('postcustomfieldvalue', {
          customFieldId: 1,
          value: 'Speaker',
          attendeeId: 'NEW-7',
          registrationEventId: 'REG-NEW',
        })
      ).body,
    ).toEqual({ success: true });
    const booked = await rest.control('bookings', {
      eventId: 5002,
      attendeeId: 'NEW-7',
      registrationEventId: 'REG-NEW',
    });
    const res = await rest.call('getreservation', {
      eventId: 5002,
      reservationNumber: booked.reservationNumber,
      customField: true,
    });
    expect(res.body[0].customFields).toEqual([]);
  });

  it.each([
    [{ customFieldId: 2, value: 'v' }, 400, 'MISSING_PARAMETER', 'reservationId'],
    [{ customFieldId: 2, value: 'v', attendeeId: 'A-1' }, 400, 'MISSING_PARAMETER', 'registrationEventId'],
    [{ customFieldId: 2, value: 'v', registrationEventId: 'R' }, 400, 'MISSING_PARAMETER', 'attendeeId'],
    [
      { customFieldId: 2, value: 'v', reservationId: 760001, attendeeId: 'A-1', registrationEventId: 'R' },
      400,
      'INVALID_PARAMETER',
      'reservationId',
    ],
    [{ customFieldId: 999, value: 'v', reservationId: 760001 }, 404, 'NOT_FOUND', 'customFieldId'],
    [{ customFieldId: 3, value: 'v', reservationId: 760001 }, 404, 'NOT_FOUND', 'customFieldId'],
    [{ customFieldId: 2, value: 'v', reservationId: 1 }, 404, 'NOT_FOUND', 'reservationId'],
    [{ customFieldId: 1, value: 'v', reservationId: 760001 }, 400, 'INVALID_PARAMETER', 'customFieldId'],
    [{ customFieldId: 2, value: 'x'.repeat(1001), reservationId: 760001 }, 400, 'INVALID_PARAMETER', 'value'],
  ])('refuses %o', async (params, status, code, field) => {
    const res = await rest.call('postcustomfieldvalue', params);
    expect([res.status, res.body.error.code, res.body.error.field]).toEqual([status, code, field]);
  });
});

describe('postattendee', () => {
  const linked = () =>
    store()
      .reservationsByEvent.get(5001)!
      .find((r) => r.attendeeId)!;
  it('creates, then updates by (attendeeId, registrationEventId)', async () => {
    const first = await rest.call(
      'postattendee',
      { attendeeId: 'NEW-1', registrationEventId: 'REG-9', firstName: 'Ada' },
      { version: 'v1' },
    );
    expect(first.body).toEqual({ success: true, created: true, attendeeId: 'NEW-1', registrationEventId: 'REG-9' });
    expect(
      (await rest.call('postattendee', { attendeeId: 'NEW-1', registrationEventId: 'REG-9', lastName: 'L' })).body
        .created,
    ).toBe(false);
    expect((await rest.call('postattendee', { attendeeId: 'NEW-1', registrationEventId: 'REG-10' })).body.created).toBe(
      true,
    );
  });

  it.each([
    ['Germany', 'DE'],
    ['de', 'DE'],
    ['DEU', 'DE'],
    ['United States of America', 'US'],
    ['can', 'CA'],
    ['Viet Nam', 'VN'], // fault: official ISO 3166 short names were refused
  ])('reads country %s as %s, and updateReservation pushes it to linked reservations', async (country, alpha2) => {
    const r = linked();
    const before = r.modifiedMs;
    await rest.emulator.state.clock.advance(60_000);
    const res = await rest.call('postattendee', {
      attendeeId: r.attendeeId!,
      registrationEventId: r.registrationEventId!,
      updateReservation: true,
      country,
      city: 'Berlin',
    });
    expect(res.body.created).toBe(false);
    const after = (
      await rest.call('getreservation', {
        eventId: 5001,
        reservationNumber: r.reservationNumber,
        fullContactInfo: true,
      })
    ).body[0];
    expect(after.contact).toMatchObject({ country: alpha2, city: 'Berlin' });
    expect(store().reservationsByNumber.get(r.reservationNumber)!.modifiedMs).toBeGreaterThan(before);
  });

  it('leaves reservations alone without updateReservation', async () => {
    const r = linked();
    const city = r.contact.city;
    await rest.call('postattendee', {
      attendeeId: r.attendeeId!,
      registrationEventId: r.registrationEventId!,
      city: 'Elsewhere',
    });
    expect(store().reservationsByNumber.get(r.reservationNumber)!.contact.city).toBe(city);
  });

  it.each([
    [{ country: 'Atlantis' }, 'country'],
    [{ country: 'XX' }, 'country'],
    [{ email: 'not-an-email' }, 'email'],
    [{ ccemail: 'a@b.co,nope' }, 'ccemail'],
    [{ firstName: 'x'.repeat(256) }, 'firstName'],
    [{ updateReservation: 'yes' }, 'updateReservation'],
    [{ attendeeId: undefined }, 'attendeeId'],
  ])('refuses %o', async (params, field) => {
    const res = await rest.call('postattendee', { attendeeId: 'A', registrationEventId: 'R', ...params });
    expect([res.status, res.body.error.field]).toEqual([400, field]);
  });

  it('removes attendee data 90 days after the last update', async () => {
    await rest.call('postattendee', { attendeeId: 'RET-1', registrationEventId: 'REG-1' });
    await rest.control('clock', { advanceMs: 89 * 86_400_000 });
    expect((await rest.call('postattendee', { attendeeId: 'RET-1', registrationEventId: 'REG-1' })).body.created).toBe(
      false,
    );
    await rest.control('clock', { advanceMs: 89 * 86_400_000 });
    expect((await rest.call('postattendee', { attendeeId: 'RET-1', registrationEventId: 'REG-1' })).body.created).toBe(
      false,
    );
    await rest.control('clock', { advanceMs: 91 * 86_400_000 });
    expect((await rest.call('postattendee', { attendeeId: 'RET-1', registrationEventId: 'REG-1' })).body.created).toBe(
      true,
    );
  });

  it('removes attendee data 90 days after the end of the latest linked event, even when updated since', async () => {
    // Event 6002 ended about 200 days before the clock's start: its attendees are gone already.
    const r = store()
      .reservationsByEvent.get(6002)!
      .find((x) => x.attendeeId)!;
    const res = await rest.call(
      'postattendee',
      { attendeeId: r.attendeeId!, registrationEventId: r.registrationEventId! },
      { licensee: '2002' },
    );
    expect(res.body.created).toBe(true);
    // Event 5003 ended about 58 days before the start: its attendees go some 32 days later.
    const past = store()
      .reservationsByEvent.get(5003)!
      .find((x) => x.attendeeId)!;
    const post = () =>
      rest.call('postattendee', { attendeeId: past.attendeeId!, registrationEventId: past.registrationEventId! });
    expect((await post()).body.created).toBe(false);
    await rest.control('clock', { advanceMs: 40 * 86_400_000 });
    expect((await post()).body.created).toBe(true);
  });
});

describe('links (v101 and v1)', () => {
  it('gives a group-code link and an edit link, 404 for unknown ones', async () => {
    const code = store().groupCodesByEvent.get(5001)![0]!;
    const link = await rest.call(
      'getgroupcodelink',
      { eventId: 5001, groupCode: code.groupCode, attendeeId: 'A-1', registrationEventId: 'R-1' },
      { version: 'v101' },
    );
    expect(link.body.link).toContain(`groupCode=${code.groupCode}`);
    const unknown = await rest.call(
      'getgroupcodelink',
      { eventId: 5001, groupCode: 'NOPE', attendeeId: 'A-1', registrationEventId: 'R-1' },
      { version: 'v1' },
    );
    expect([unknown.status, unknown.body.error.field]).toEqual([404, 'groupCode']);
    const missing = await rest.call(
      'getgroupcodelink',
      { eventId: 5001, groupCode: code.groupCode },
      { version: 'v101' },
    );
    expect([missing.status, missing.body.error.field]).toEqual([400, 'attendeeId']);
    const edit = await rest.call('geteditreservationlink', { reservationNumber: 700001 }, { version: 'v1' });
    expect(edit.body.link).toContain('700001');
    expect((await rest.call('geteditreservationlink', { reservationNumber: 900001 }, { version: 'v1' })).status).toBe(
      404,
    );
  });
});

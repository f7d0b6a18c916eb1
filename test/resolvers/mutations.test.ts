import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  CreateCustomFieldDocument,
  CustomFieldsDocument,
  QuestionsDocument,
  RecordActualizedPickupDocument,
  ReservationContactDocument,
  ReservationDetailDocument,
  SaveEventQuestionDocument,
  SetCustomFieldValueDocument,
  UpsertAttendeeDocument,
} from '../documents/generated.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway();
});
afterAll(() => t.close());
beforeEach(async () => {
  t.emulator.state.reset();
  await t.gateway.upstream.clearCache();
});

const upstreamWrites = () => t.calls().filter((c) => c.endpoint.startsWith('post'));

describe('mutations round-trip: what they write is visible through the matching query', () => {
  it('saveEventQuestion: a select box with its options, then the event’s questions', async () => {
    const saved = await t.exec(SaveEventQuestionDocument, {
      input: {
        eventId: 5001,
        questionId: 40,
        question: 'Gala dinner?',
        type: 'SELECT_BOX',
        options: [
          { value: '1', label: 'Yes' },
          { value: '0', label: 'No' },
        ],
        enabled: true,
      },
    });
    expect(saved.errors).toBeUndefined();
    expect(saved.data!.saveEventQuestion.question).toMatchObject({ eventId: 5001, questionId: 40, type: 'SELECT_BOX' });
    const sent = t.calls().find((c) => c.endpoint === 'posteventquestion')!;
    expect(JSON.parse(sent.params.options as string)).toEqual({ 1: 'Yes', 0: 'No' });
    const read = await t.exec(QuestionsDocument, { eventId: 5001 });
    const q = read.data!.event!.questions.find((x) => x.questionId === 40)!;
    expect(q).toMatchObject({ question: 'Gala dinner?', type: 'SELECT_BOX', enabled: true });
    expect(q.options).toEqual(
      expect.arrayContaining([
        { value: '1', label: 'Yes' },
        { value: '0', label: 'No' },
      ]),
    );
  });

  it('saveEventQuestion with eventId 0: a default question', async () => {
    await t.exec(SaveEventQuestionDocument, {
      input: { eventId: 0, questionId: 5, question: 'Arrival by car?', type: 'TEXT_AREA', enabled: true },
    });
    const read = await t.exec(QuestionsDocument, { eventId: 5002 });
    expect(read.data!.defaultQuestions.map((q) => q.questionId)).toContain(5);
    expect(read.data!.event!.questions.map((q) => q.questionId)).toContain(5);
  });

  it('createCustomField and setCustomFieldValue on a reservation, then the reservation’s values', async () => {
    const created = await t.exec(CreateCustomFieldDocument, { input: { name: 'Shuttle', eventId: 5002 } });
    const field = created.data!.createCustomField.customField;
    expect(field).toMatchObject({ name: 'Shuttle', eventId: 5002 });
    const listed = await t.exec(CustomFieldsDocument, { eventId: 5002 });
    expect(listed.data!.customFields.map((f) => f.customFieldId)).toContain(field.customFieldId);
    const set = await t.exec(SetCustomFieldValueDocument, {
      input: { customFieldId: field.customFieldId, value: 'Yes', reservationNumber: 760_001 },
    });
    expect(set.errors).toBeUndefined();
    expect(set.data!.setCustomFieldValue.reservation!.customFieldValues).toEqual([
      { customFieldId: field.customFieldId, value: 'Yes' },
    ]);
    const detail = await t.exec(ReservationDetailDocument, { eventId: 5002, reservationNumber: 760_001 });
    expect(detail.data!.event!.reservation!.customFieldValues).toEqual([
      { customFieldId: field.customFieldId, name: 'Shuttle', value: 'Yes', customField: { name: 'Shuttle' } },
    ]);
  });

  it('setCustomFieldValue on an attendee shows on that attendee’s reservations', async () => {
    const r = t.emulator.state.store.reservationsByEvent.get(5002)!.find((x) => x.attendeeId)!;
    const set = await t.exec(SetCustomFieldValueDocument, {
      input: {
        customFieldId: 2,
        value: 'CC-7',
        attendeeId: r.attendeeId!,
        registrationEventId: r.registrationEventId!,
      },
    });
    expect(set.data!.setCustomFieldValue).toMatchObject({
      customFieldId: 2,
      value: 'CC-7',
      reservation: null,
      attendee: { attendeeId: r.attendeeId },
    });
    const detail = await t.exec(ReservationDetailDocument, { eventId: 5002, reservationNumber: r.reservationNumber });
    expect(detail.data!.event!.reservation!.customFieldValues).toContainEqual(
      expect.objectContaining({ customFieldId: 2, value: 'CC-7' }),
    );
  });

  it('upsertAttendee creates, then updates and pushes to the linked reservation with updateReservation', async () => {
    const r = t.emulator.state.store.reservationsByEvent.get(5001)!.find((x) => x.attendeeId)!;
    const fresh = await t.exec(UpsertAttendeeDocument, {
      input: {
        attendeeId: 'NEW-9',
        registrationEventId: 'REG-9',
        email: 'ada@example.com',
        ccEmails: ['a@example.com', 'b@example.com'],
        country: 'DEU',
      },
    });
    expect(fresh.data!.upsertAttendee).toEqual({
      created: true,
      attendee: { attendeeId: 'NEW-9', registrationEventId: 'REG-9' },
    });
    const sent = t.calls().find((c) => c.endpoint === 'postattendee')!;
    expect(sent.params).toMatchObject({ ccemail: 'a@example.com,b@example.com', country: 'DE' });
    const update = await t.exec(UpsertAttendeeDocument, {
      input: {
        attendeeId: r.attendeeId!,
        registrationEventId: r.registrationEventId!,
        updateReservation: true,
        city: 'Lisbon',
        country: 'Portugal',
      },
    });
    expect(update.data!.upsertAttendee.created).toBe(false);
    const read = await t.exec(ReservationContactDocument, { eventId: 5001, reservationNumber: r.reservationNumber });
    expect(read.data!.event!.reservation!.contact).toMatchObject({ city: 'Lisbon', country: 'PT' });
  });

  it('recordActualizedPickup sends its nights as the JSON array', async () => {
    const hotelId = t.emulator.state.store.hotelsByEvent.get(5001)![0]!.hotelId;
    const res = await t.exec(RecordActualizedPickupDocument, {
      input: {
        eventId: 5001,
        hotelId,
        nights: [
          { date: '2027-03-12', rooms: 30 },
          { date: '2027-03-13', rooms: 28 },
        ],
      },
    });
    expect(res.data!.recordActualizedPickup.stored).toBe(2);
    const day = Date.UTC(2027, 2, 13) / 86_400_000;
    expect(t.emulator.state.store.actualized.get(`5001:${hotelId}:${day}`)).toBe(28);
  });
});

describe('mutation inputs are checked before any upstream call', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- documents of different operations in one table
  const cases: [string, TypedDocumentNode<any, any>, Record<string, unknown>, string][] = [
    [
      'select box without options',
      SaveEventQuestionDocument,
      { input: { eventId: 5001, questionId: 1, question: 'Q', type: 'SELECT_BOX', enabled: true } },
      'input.options',
    ],
    [
      'text area with options',
      SaveEventQuestionDocument,
      {
        input: {
          eventId: 5001,
          questionId: 1,
          question: 'Q',
          type: 'TEXT_AREA',
          options: [{ value: '1', label: 'Y' }],
          enabled: true,
        },
      },
      'input.options',
    ],
    [
      'an option label over 100 characters',
      SaveEventQuestionDocument,
      {
        input: {
          eventId: 5001,
          questionId: 1,
          question: 'Q',
          type: 'SELECT_BOX',
          options: [{ value: '1', label: 'x'.repeat(101) }],
          enabled: true,
        },
      },
      'input.options.0.label',
    ],
    [
      'an empty question',
      SaveEventQuestionDocument,
      { input: { eventId: 5001, questionId: 1, question: '  ', type: 'TEXT_AREA', enabled: true } },
      'input.question',
    ],
    [
      'a value on nothing',
      SetCustomFieldValueDocument,
      { input: { customFieldId: 2, value: 'v' } },
      'input.reservationNumber',
    ],
    [
      'a value on a reservation and an attendee',
      SetCustomFieldValueDocument,
      { input: { customFieldId: 2, value: 'v', reservationNumber: 760_001, attendeeId: 'A' } },
      'input.reservationNumber',
    ],
    [
      'an attendee without registration event',
      SetCustomFieldValueDocument,
      { input: { customFieldId: 2, value: 'v', attendeeId: 'A' } },
      'input.registrationEventId',
    ],
    [
      'an unknown country',
      UpsertAttendeeDocument,
      { input: { attendeeId: 'A', registrationEventId: 'R', country: 'Atlantis' } },
      'input.country',
    ],
    [
      'a bad cc email',
      UpsertAttendeeDocument,
      { input: { attendeeId: 'A', registrationEventId: 'R', ccEmails: ['ok@example.com', 'nope'] } },
      'input.ccEmails.1',
    ],
    ['a name over 255 characters', CreateCustomFieldDocument, { input: { name: 'x'.repeat(256) } }, 'input.name'],
    [
      'no nights',
      RecordActualizedPickupDocument,
      { input: { eventId: 5001, hotelId: 201, nights: [] } },
      'input.nights',
    ],
    [
      'negative rooms',
      RecordActualizedPickupDocument,
      { input: { eventId: 5001, hotelId: 201, nights: [{ date: '2027-03-12', rooms: -2 }] } },
      'input.nights.0.rooms',
    ],
    // The limits live in the endpoint table alone; its parameter paths are mapped to the input's.
    [
      'an option value over 255 characters',
      SaveEventQuestionDocument,
      {
        input: {
          eventId: 5001,
          questionId: 1,
          question: 'Q',
          type: 'SELECT_BOX',
          options: [
            { value: '1', label: 'Y' },
            { value: 'v'.repeat(256), label: 'N' },
          ],
          enabled: true,
        },
      },
      'input.options.1.value',
    ],
    [
      '51 options',
      SaveEventQuestionDocument,
      {
        input: {
          eventId: 5001,
          questionId: 1,
          question: 'Q',
          type: 'SELECT_BOX',
          options: Array.from({ length: 51 }, (_, i) => ({ value: String(i), label: 'L' })),
          enabled: true,
        },
      },
      'input.options',
    ],
    [
      'a question over 1000 characters',
      SaveEventQuestionDocument,
      { input: { eventId: 5001, questionId: 1, question: 'q'.repeat(1001), type: 'TEXT_AREA', enabled: true } },
      'input.question',
    ],
    [
      'a value over 1000 characters',
      SetCustomFieldValueDocument,
      { input: { customFieldId: 2, value: 'v'.repeat(1001), reservationNumber: 760_001 } },
      'input.value',
    ],
    [
      'cc emails over 255 characters together',
      UpsertAttendeeDocument,
      {
        input: {
          attendeeId: 'A',
          registrationEventId: 'R',
          ccEmails: Array.from({ length: 20 }, (_, i) => `someone-${i}@example.com`),
        },
      },
      'input.ccEmails',
    ],
    [
      '367 nights',
      RecordActualizedPickupDocument,
      {
        input: {
          eventId: 5001,
          hotelId: 201,
          nights: Array.from({ length: 367 }, (_, i) => ({
            date: new Date(Date.UTC(2027, 0, 1 + i)).toISOString().slice(0, 10),
            rooms: 1,
          })),
        },
      },
      'input.nights',
    ],
  ];
  it.each(cases)('%s', async (_name, document, variables, field) => {
    t.clearLog();
    const res = await t.exec(document, variables as never);
    expect(res.status).toBe(200);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
    expect(res.errors?.[0]?.message).toContain(field);
    expect(upstreamWrites()).toEqual([]);
  });

  // Fault: "each date once" lived in the resolver, not in the endpoint table, and named only input.nights.
  it('refuses a date given twice, naming the second at input.nights.N.date, before any write', async () => {
    t.clearLog();
    const nights = [
      { date: '2027-03-01', rooms: 1 },
      { date: '2027-03-02', rooms: 2 },
      { date: '2027-03-01', rooms: 3 },
    ];
    const res = await t.exec(RecordActualizedPickupDocument, { input: { eventId: 5001, hotelId: 201, nights } });
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.nights.2.date' });
    expect(res.errors?.[0]?.message).toBe('input.nights.2.date: names a date already given');
    expect(upstreamWrites()).toEqual([]);
  });

  it('refuses a date that is not a real date in the Date scalar', async () => {
    t.clearLog();
    const res = await t.exec(RecordActualizedPickupDocument, {
      input: { eventId: 5001, hotelId: 201, nights: [{ date: '2027-02-30', rooms: 1 }] },
    });
    expect(res.errors?.[0]?.message).toContain('Date must be a real date');
    expect(res.status).toBeLessThan(500);
    expect(upstreamWrites()).toEqual([]);
  });

  it('refuses a value for a field of another event before the write, when eventId is given (fault: the service refused it after the call)', async () => {
    // Custom field 1 is restricted to event 5001; reservation 760001 belongs to event 5002.
    t.clearLog();
    const res = await t.exec(SetCustomFieldValueDocument, {
      input: { customFieldId: 1, value: 'VIP', reservationNumber: 760_001, eventId: 5002 },
    });
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.customFieldId' });
    expect(res.errors?.[0]?.message).toBe(
      'input.customFieldId: custom field 1 is restricted to event 5001, not event 5002',
    );
    expect(upstreamWrites()).toEqual([]);
    const right = await t.exec(SetCustomFieldValueDocument, {
      input: { customFieldId: 1, value: 'VIP', reservationNumber: 700_001, eventId: 5001 },
    });
    expect(right.errors).toBeUndefined();
    expect(upstreamWrites()).toHaveLength(1);
  });

  // Fault: the check ran only with reservationNumber; on an attendee the write was sent.
  it('refuses a value for a field of another event on an attendee too, before the write', async () => {
    const r = t.emulator.state.store.reservationsByEvent.get(5002)!.find((x) => x.attendeeId)!;
    t.clearLog();
    const res = await t.exec(SetCustomFieldValueDocument, {
      input: {
        customFieldId: 1,
        value: 'VIP',
        attendeeId: r.attendeeId!,
        registrationEventId: r.registrationEventId!,
        eventId: 5002,
      },
    });
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.customFieldId' });
    expect(res.errors?.[0]?.message).toBe(
      'input.customFieldId: custom field 1 is restricted to event 5001, not event 5002',
    );
    expect(t.calls().filter((c) => c.endpoint === 'postcustomfieldvalue')).toEqual([]);
  });

  it('maps a target that does not exist upstream to NOT_FOUND', async () => {
    const res = await t.exec(SetCustomFieldValueDocument, {
      input: { customFieldId: 999, value: 'v', reservationNumber: 760_001 },
    });
    expect(res.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

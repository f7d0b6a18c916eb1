import { idNumbers } from '../ids/local-id.ts';
import { resolveQuestionReference } from '../resolvers/entities.ts';
import { getQuestion, listQuestions, saveEventQuestion } from '../resolvers/question.ts';
import { scoped } from '../resolvers/request-calls.ts';
import { getReservation } from '../resolvers/reservation.ts';
import type { QuestionModel } from '../upstream/records.ts';
import { QUESTION_TYPES } from '../upstream/vocabulary.ts';
import { builder } from './builder.ts';
import { costs, costsNothing, defaultQuestionList, oncePerEvent, oneWrite, reservationOfEach } from './cost.ts';
import { known, QuestionType } from './enums.ts';
import { internalOnly } from './federation.ts';
import { AttendeeAnswerRef, AttendeeRef, EventQuestionRef, isNode, ReservationRef, rawDescription } from './refs.ts';
import { needs } from './scopes.ts';
import { reservationFlags } from './selection.ts';

const QuestionOption = builder.objectRef<{ value: string; label: string }>('QuestionOption').implement({
  description: 'One option of a select-box question.',
  fields: (t) => ({
    value: t.exposeString('value', { description: 'The value recorded as the answer.', ...costsNothing }),
    label: t.exposeString('label', { description: 'The label shown.', ...costsNothing }),
  }),
});

builder.asEntity(EventQuestionRef, {
  key: builder.selection<{ eventId: number; questionId: number }>('eventId questionId'),
  resolveReference: (ref, ctx) => resolveQuestionReference(ctx, ref),
});

builder.node(EventQuestionRef, {
  description:
    'A question shown to attendees during reservation; eventId 0 marks a default question asked for all events.',
  id: { resolve: (q) => `${q.eventId}:${q.questionId}`, parse: (id) => idNumbers(id, 2) },
  isTypeOf: isNode('EventQuestion'),
  loadOne: (numbers, ctx) => {
    const [eventId, questionId] = numbers ?? [];
    return eventId === undefined || questionId === undefined ? null : getQuestion(ctx, eventId, questionId);
  },
  fields: (t) => ({
    eventId: t.exposeInt('eventId', { description: 'The event, or 0 for a default question.', ...costsNothing }),
    questionId: t.exposeInt('questionId', {
      description: 'The number the integrating system assigned; answers carry it.',
      ...costsNothing,
    }),
    question: t.exposeString('question', {
      nullable: true,
      description: 'Text shown to the attendee.',
      ...costsNothing,
    }),
    type: t.field({
      type: QuestionType,
      nullable: true,
      description: 'Text area or select box.',
      ...costsNothing,
      resolve: (q) => known(QUESTION_TYPES, q.type),
    }),
    options: t.field({
      type: [QuestionOption],
      nullable: true,
      description: 'Options of a select box; null for a text area.',
      ...costsNothing,
      resolve: (q: QuestionModel) =>
        q.options
          ? Object.entries(q.options as Record<string, string>).map(([value, label]) => ({ value, label }))
          : null,
    }),
    enabled: t.exposeBoolean('enabled', {
      nullable: true,
      description: 'Whether the question is asked.',
      ...costsNothing,
    }),
    raw: t.field({
      type: 'JSON',
      description: rawDescription,
      ...internalOnly,
      ...costsNothing,
      resolve: (q) => q.raw,
    }),
  }),
});

AttendeeAnswerRef.implement({
  description: 'An answer an attendee gave during reservation.',
  fields: (t) => ({
    reservation: t.field({
      type: ReservationRef,
      nullable: true,
      description: 'The reservation it was given in.',
      ...costs(reservationOfEach),
      resolve: (a, _args, ctx, info) =>
        a.reservationNumber == null
          ? null
          : getReservation(scoped(ctx, info), a.eventId, a.reservationNumber, reservationFlags(info, [])),
    }),
    attendee: t.field({
      type: AttendeeRef,
      nullable: true,
      description: 'The attendee, when the reservation is linked to one.',
      ...costsNothing,
      resolve: (a) =>
        a.attendeeId && a.registrationEventId
          ? { attendeeId: a.attendeeId, registrationEventId: a.registrationEventId }
          : null,
    }),
    question: t.field({
      type: EventQuestionRef,
      nullable: true,
      description: 'The question.',
      ...costs(oncePerEvent),
      resolve: (a, _args, ctx, info) => getQuestion(scoped(ctx, info), a.eventId, a.questionId),
    }),
    questionId: t.exposeInt('questionId', { description: 'The question’s id.', ...costsNothing }),
    answer: t.exposeString('answer', {
      nullable: true,
      description: 'The answer (for a select box, the option’s value).',
      ...costsNothing,
    }),
    answeredAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it was given.',
      ...costsNothing,
      resolve: (a) => a.answeredDate ?? null,
    }),
    raw: t.field({
      type: 'JSON',
      description: rawDescription,
      ...internalOnly,
      ...costsNothing,
      resolve: (a) => a.raw,
    }),
  }),
});

builder.queryField('defaultQuestions', (t) =>
  t.field({
    type: [EventQuestionRef],
    description: 'The licensee’s default questions, asked for all events.',
    ...costs(defaultQuestionList),
    ...needs('read'),
    resolve: (_root, _args, ctx, info) => listQuestions(scoped(ctx, info), 0),
  }),
);

const QuestionOptionInput = builder.inputType('QuestionOptionInput', {
  description: 'One option of a select box.',
  fields: (t) => ({
    value: t.string({ required: true, description: 'The value recorded as the answer.' }),
    label: t.string({ required: true, description: 'The label shown (at most 100 characters).' }),
  }),
});

const SaveEventQuestionInput = builder.inputType('SaveEventQuestionInput', {
  description: 'A question to register; saving the same eventId and questionId again replaces it.',
  fields: (t) => ({
    eventId: t.int({ required: true, description: 'The event, or 0 for a default question asked for all events.' }),
    questionId: t.int({ required: true, description: 'Your number for the question; answers carry it.' }),
    question: t.string({ required: true, description: 'Text shown to the attendee (at most 1000 characters).' }),
    type: t.field({ type: QuestionType, required: true, description: 'Text area or select box.' }),
    options: t.field({
      type: [QuestionOptionInput],
      description: 'Required for a SELECT_BOX (1 to 50), refused otherwise.',
    }),
    enabled: t.boolean({ required: true, description: 'Whether the question is asked.' }),
  }),
});

const SaveEventQuestionPayload = builder.objectRef<{ question: QuestionModel }>('SaveEventQuestionPayload').implement({
  description: 'The question saved.',
  fields: (t) => ({
    question: t.field({
      type: EventQuestionRef,
      description: 'The question as registered.',
      ...costsNothing,
      resolve: (p) => p.question,
    }),
  }),
});

builder.mutationField('saveEventQuestion', (t) =>
  t.field({
    type: SaveEventQuestionPayload,
    description: 'Registers a question for an event, or a default one (eventId 0).',
    args: { input: t.arg({ type: SaveEventQuestionInput, required: true, description: 'The question.' }) },
    ...costs(oneWrite),
    ...needs('write'),
    resolve: async (_root, args, ctx) => ({ question: await saveEventQuestion(ctx, args.input) }),
  }),
);

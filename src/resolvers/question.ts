import { z } from 'zod';
import { mapPageOnce, type PagedSource, sourceKey } from '../connections/paged-source.ts';
import { type Connection, resolveWindow, type WindowArgs } from '../connections/window.ts';
import { readOrNull, withDefaults } from '../upstream/record-view.ts';
import type { AnswerModel, QuestionModel } from '../upstream/records.ts';
import { questionType } from '../upstream/vocabulary.ts';
import type { GatewayContext } from './context.ts';
import { asInput, validate } from './validate.ts';

/** The event's questions followed by the default ones (eventId 0: the defaults only). */
export async function listQuestions(ctx: GatewayContext, eventId: number): Promise<QuestionModel[]> {
  return (await ctx.calls.read('geteventquestions', { eventId })).map((q) => ({ ...q, eventId: q.eventId ?? eventId }));
}

export async function getQuestion(
  ctx: GatewayContext,
  eventId: number,
  questionId: number,
): Promise<QuestionModel | null> {
  return (await listQuestions(ctx, eventId)).find((q) => q.questionId === questionId) ?? null;
}

export function answerSource(ctx: GatewayContext, eventId: number): PagedSource<AnswerModel> {
  return {
    key: sourceKey(['answers', eventId]),
    licensee: ctx.account.systemIdentifier,
    pageCount: () => ctx.calls.read('getattendeeanswerspagecount', { eventId }),
    page: async (page) =>
      mapPageOnce(await ctx.calls.read('getattendeeanswers', { eventId, page }), (list) =>
        list.map((a) => withDefaults(a, { eventId }) as AnswerModel),
      ),
    orderOf: byReservationThenQuestion,
    onUndecodable: (positions) =>
      ctx.log?.warn(
        { endpoint: 'getattendeeanswers', eventId, positions },
        'answers without a readable question id skipped',
      ),
  };
}

/** The service lists answers by reservation number, then question (docs/upstream.md, getattendeeanswers). */
function byReservationThenQuestion(a: AnswerModel): readonly number[] | null {
  const reservationNumber = readOrNull(a, 'reservationNumber');
  return reservationNumber == null ? null : [reservationNumber, a.questionId];
}

export function listAnswers(ctx: GatewayContext, eventId: number, window: WindowArgs): Connection<AnswerModel> {
  return resolveWindow(answerSource(ctx, eventId), window);
}

// Lengths, counts and distinct values are the endpoint table's rules (posteventquestion).
const saveSchema = z
  .object({
    eventId: z.number().int().min(0),
    questionId: z.number().int().min(0),
    question: z.string().trim().min(1, 'must not be empty'),
    type: questionType,
    options: z.array(z.object({ value: z.string(), label: z.string() })).nullish(),
    enabled: z.boolean(),
  })
  .superRefine((q, ctx) => {
    if (q.type === 2 && !q.options)
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'are required for a SELECT_BOX question' });
    if (q.type === 1 && q.options)
      ctx.addIssue({ code: 'custom', path: ['options'], message: 'are only for a SELECT_BOX question' });
  });

export type SaveEventQuestionInput = z.input<typeof saveSchema>;

/** Registers (or replaces) a question; the select box's options go upstream as a value → label object. */
export async function saveEventQuestion(ctx: GatewayContext, input: SaveEventQuestionInput): Promise<QuestionModel> {
  const q = validate(saveSchema, input, 'input');
  const options = q.options?.map((o) => ({ value: o.value, label: o.label }));
  await asInput('input', () =>
    ctx.calls.send('posteventquestion', {
      eventId: q.eventId,
      questionId: q.questionId,
      question: q.question,
      type: q.type,
      options,
      enabled: q.enabled,
    }),
  );
  const labels = options ? Object.fromEntries(options.map((o) => [o.value, o.label])) : null;
  const record = {
    eventId: q.eventId,
    questionId: q.questionId,
    question: q.question,
    type: q.type,
    options: labels,
    enabled: q.enabled,
  };
  return { ...record, raw: record };
}

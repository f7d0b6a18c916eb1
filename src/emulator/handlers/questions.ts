import { formatAnswer, questionJson } from '../format.ts';
import { invalid, ServiceError } from '../params.ts';
import { RawJson } from '../raw-json.ts';
import { type HandlerContext, page, pageCount, type Route, V101_UP } from '../route.ts';
import { questionKey } from '../store.ts';
import { requireEvent } from './events.ts';

/** eventId 0 names the licensee's default questions; any other must be one of its events. */
function questionEvent(ctx: HandlerContext): number {
  const eventId = ctx.params.eventId as number;
  if (eventId === 0) return 0;
  return requireEvent(ctx).eventId;
}

/**
 * The options in the order given, each value once (a repeated value keeps its first place and its
 * last label, as JSON reading does). Read as entries, so a value such as `__proto__` is kept.
 */
function readOptions(members: [string, unknown][]): [string, string][] {
  if (members.length === 0) throw invalid('options', 'options must hold at least one option');
  const options = new Map<string, string>();
  for (const [key, label] of members) {
    if (typeof label !== 'string' && typeof label !== 'number')
      throw invalid('options', `option ${key} must have a text label`);
    const text = String(label);
    if (text.length === 0 || text.length > 100)
      throw invalid('options', `label of option ${key} must be 1 to 100 characters`);
    if (key.length > 255) throw invalid('options', 'an option value is longer than 255 characters');
    options.set(key, text);
  }
  if (options.size > 50) throw invalid('options', 'options holds more than 50 entries');
  return [...options];
}

export const questionRoutes: Route[] = [
  {
    name: 'posteventquestion',
    versions: V101_UP,
    params: {
      eventId: { type: 'int', required: true },
      questionId: { type: 'int', required: true },
      question: { type: 'string', required: true, max: 1000 },
      type: { type: ['1', '2'], required: true },
      options: { type: 'jsonObject' },
      enabled: { type: 'bool', required: true },
    },
    handle(ctx) {
      const eventId = questionEvent(ctx);
      const p = ctx.params as {
        questionId: number;
        question: string;
        type: string;
        options?: [string, unknown][];
        enabled: boolean;
      };
      const type = p.type === '2' ? 2 : 1;
      if (type === 2 && p.options === undefined) {
        throw new ServiceError(400, 'MISSING_PARAMETER', 'options is required when type is 2 (select box)', 'options');
      }
      const options = type === 2 ? readOptions(p.options!) : null;
      const licensee = ctx.licensee.systemIdentifier;
      ctx.store.questions.set(questionKey(licensee, eventId, p.questionId), {
        licensee,
        eventId,
        questionId: p.questionId,
        question: p.question,
        type,
        options,
        enabled: p.enabled,
      });
      return { success: true, eventId, questionId: p.questionId };
    },
  },
  {
    name: 'geteventquestions',
    versions: V101_UP,
    params: { eventId: { type: 'int', required: true } },
    listName: 'questions',
    handle(ctx) {
      const eventId = questionEvent(ctx);
      const licensee = ctx.licensee.systemIdentifier;
      const mine = [...ctx.store.questions.values()].filter((q) => q.licensee === licensee);
      const byId = (a: { questionId: number }, b: { questionId: number }) => a.questionId - b.questionId;
      const own = eventId === 0 ? [] : mine.filter((q) => q.eventId === eventId).sort(byId);
      const defaults = mine.filter((q) => q.eventId === 0).sort(byId);
      // Written out by hand: JSON.stringify would put integer-like option values first.
      return new RawJson(`[${[...own, ...defaults].map(questionJson).join(',')}]`);
    },
  },
  {
    name: 'getattendeeanswers',
    versions: V101_UP,
    params: { eventId: { type: 'int', required: true }, page: { type: 'int' } },
    listName: 'answers',
    handle(ctx) {
      const event = requireEvent(ctx);
      const pageNumber = (ctx.params.page as number | undefined) ?? 1;
      if (pageNumber < 1) throw invalid('page', 'page must be 1 or more');
      const licensee = ctx.licensee.systemIdentifier;
      return page(ctx.store.answersOf(event.eventId), pageNumber).map((a) =>
        formatAnswer(a, ctx.store, licensee, ctx.licensee.timeZone),
      );
    },
  },
  {
    name: 'getattendeeanswerspagecount',
    versions: V101_UP,
    params: { eventId: { type: 'int', required: true } },
    pageCount: true,
    handle: (ctx) => pageCount(ctx.store.answersOf(requireEvent(ctx).eventId).length),
  },
];

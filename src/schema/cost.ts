import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLSchema,
  isObjectType,
} from 'graphql';
import {
  DEFAULT_WINDOW,
  MAX_SEEK_PAGES,
  MAX_STREAMED_WINDOW,
  MAX_WINDOW,
  UPSTREAM_PAGE,
} from '../connections/window.ts';
import { RESERVATION_LOOKUPS_MAX } from '../resolvers/entities.ts';
import { flattenFields, hotelFromRecord } from './selection.ts';
import { isStreamed } from './streamed-edges.ts';

/**
 * The upstream cost of each field, declared on the field itself (`...costs(rule)` or `...costsNothing`
 * in its options, which Pothos keeps in the field's `extensions`), so a field added or renamed
 * without one is a failing test rather than a silent 0. The estimator (operations/cost.ts) walks a
 * document through the schema's types and asks each field's rule what it costs: a rule belongs to a
 * parent type and a field (`Reservation.event`, not every field called `event`).
 *
 * A rule sees the level it is asked at: how many distinct objects the level can hold and how many
 * distinct events they belong to. The request's calls (resolvers/request-calls.ts) make one call
 * per distinct key, so an event's hotels cost one call per event however many of its reservations
 * ask, while a reservation looked up by number costs one call per answer that asks.
 */

export type Args = Record<string, unknown>;

/** Distinct objects a level of the result can hold, and the distinct events they belong to. */
export interface Scope {
  records: number;
  events: number;
}

export interface FieldCost {
  calls: number;
  /** The scope of the field's own selection; the parent's when absent. */
  below?: Scope;
  /** For a field of an abstract type whose members come in known numbers (`_entities`): the scope per type; a type not named has none. */
  belowByType?: Record<string, Scope>;
}

/** What a rule may read of the operation being estimated: its fragments and its coerced variables. */
export interface Operation {
  fragments: Record<string, FragmentDefinitionNode>;
  variables: Args;
}

export type Rule = (scope: Scope, args: Args, field: FieldNode, operation: Operation) => FieldCost;

const EXTENSION = 'upstreamCost';

/** Field options that declare the field's upstream cost: spread them into the field's options. */
export const costs = (rule: Rule) => ({ extensions: { [EXTENSION]: rule } });

/** No upstream call: the field's value comes with its parent's record (or is computed), in the parent's scope. */
export const FREE: Rule = () => ({ calls: 0 });

/** Field options of a field that makes no upstream call. */
export const costsNothing = costs(FREE);

/** The rule a field declares; undefined when it declares none. */
export function ruleOf(field: GraphQLField<unknown, unknown>): Rule | undefined {
  const rule = field.extensions[EXTENSION];
  return typeof rule === 'function' ? (rule as Rule) : undefined;
}

/** `Type.field` of every field of an object type (introspection's aside) that declares no cost. */
export function fieldsWithoutCost(schema: GraphQLSchema): string[] {
  return Object.values(schema.getTypeMap())
    .filter(isObjectType)
    .filter((type) => !type.name.startsWith('__'))
    .flatMap((type) =>
      Object.values(type.getFields())
        .filter((field) => !ruleOf(field))
        .map((field) => `${type.name}.${field.name}`),
    );
}

/**
 * A plain (unpaged) list is read whole; no limit is documented, so it is taken as one page.
 * No per-record lookup hangs below a plain list today, so this only keeps the walk conservative.
 */
const LIST_RECORDS = UPSTREAM_PAGE;
/**
 * Distinct events among the custom fields of all events (`customFields` without eventId): the
 * service cannot list events, so this is an assumption, not a bound.
 */
export const UNSCOPED_EVENTS = 20;

/** A mutation field: one write, sent every time (writes are not deduplicated); its payload comes back with it. */
export const oneWrite: Rule = () => ({ calls: 1 });

/**
 * A subscription to an event's changes. Its feed's polls are shared by every subscriber of the
 * event and made on the feed's schedule, but what the subscription adds is its own: the feed's
 * baseline read when it is the first (its first page counted here, the rest of the event at
 * background priority), a replay of what changed `since` (the same), and, for every change told,
 * the lookups its selection makes per record. Changes arrive a poll's page at a time, so the
 * selection below is counted for a page of records: a per-record lookup under a subscription is
 * as costly as under a 1000-record page of a query, and is refused the same way.
 */
export const changeFeed: Rule = (_scope, args) => ({
  calls: 1 + (args.since == null ? 0 : 1),
  below: { records: UPSTREAM_PAGE, events: 1 },
});

/** One call whose answer is a value, nothing below it (a link). */
export const oneCall: Rule = () => ({ calls: 1 });

export const oncePerEvent: Rule = (scope) => ({
  calls: scope.events,
  below: { records: scope.events, events: scope.events },
});
export const listPerEvent: Rule = (scope) => ({
  calls: scope.events,
  below: { records: scope.events * LIST_RECORDS, events: scope.events },
});
/** A hotel of the record's event: one gethotels per event serves every hotel lookup of it. */
export const hotelOfEvent: Rule = (scope) => ({ calls: scope.events, below: scope });
/** A reservation's hotel: free when only what the reservation itself holds is selected (its name and id). */
export const hotelOfReservation: Rule = (scope, args, field, operation) =>
  hotelFromRecord.atField(field, operation.fragments) ? { calls: 0 } : hotelOfEvent(scope, args, field, operation);

/** Records a connection window can hold, and the upstream calls it can make (connections/window.ts). */
function window(field: FieldNode, args: Args, operation: Operation): { records: number; pages: number } {
  const first = typeof args.first === 'number' ? args.first : undefined;
  const last = typeof args.last === 'number' ? args.last : undefined;
  const selected = flattenFields(field.selectionSet, operation.fragments);
  // Streamed edges allow a larger window (connections/window.ts); each of its pages is still a call.
  const edges = selected.filter((f) => f.name.value === 'edges');
  const streamed =
    first !== undefined &&
    last === undefined &&
    args.before == null &&
    edges.length > 0 &&
    edges.every((f) => isStreamed(f, operation.variables));
  const records = Math.max(0, Math.min(first ?? last ?? DEFAULT_WINDOW, streamed ? MAX_STREAMED_WINDOW : MAX_WINDOW));
  const names = new Set(selected.map((f) => f.name.value));
  const readsWindow = names.has('edges') || names.has('pageInfo');
  const asksNextPage = selected.some(
    (f) =>
      f.name.value === 'pageInfo' &&
      flattenFields(f.selectionSet, operation.fragments).some((g) => g.name.value === 'hasNextPage'),
  );
  const cursors = (args.after == null ? 0 : 1) + (args.before == null ? 0 : 1);
  const pages = readsWindow
    ? windowPages(records, { fromStart: cursors === 0 && last === undefined, asksNextPage, cursors })
    : 0;
  // totalCount, and last without before, cost the page count and the last page.
  const counted = names.has('totalCount') || last !== undefined;
  return { records, pages: pages + (counted ? 2 : 0) };
}

/** The pages a window of `records` can read. */
function windowPages(
  records: number,
  { fromStart, asksNextPage, cursors }: { fromStart: boolean; asksNextPage: boolean; cursors: number },
): number {
  const spanned = Math.ceil(records / UPSTREAM_PAGE);
  // From the start of the list: its own pages, and the page after when the window ends where a
  // page does and hasNextPage asks what follows.
  if (fromStart) return spanned + (records % UPSTREAM_PAGE === 0 && asksNextPage ? 1 : 0);
  // Elsewhere one page more: the window straddles a boundary, or ends on one and reads ahead (never
  // both). A cursor is placed by its record's key: checking the next key reads a page the window
  // reads anyway, but in a list that changed since, the seek may read up to MAX_SEEK_PAGES more.
  return spanned + 1 + cursors * MAX_SEEK_PAGES;
}

/**
 * An event's paged list (reservations, answers): its pages once per event. The connection's own
 * fields (edges, pageInfo, totalCount) cost nothing of their own: this counts what they read.
 */
export const pagedPerEvent: Rule = (scope, args, field, operation) => {
  const { records, pages } = window(field, args, operation);
  return { calls: scope.events * pages, below: { records: scope.events * records, events: scope.events } };
};

/** An attendee's reservations of one event are few: one page, read whole, per attendee. */
export const attendeeReservations: Rule = (scope, args, field, operation) => ({
  calls: scope.records,
  below: { records: scope.records * window(field, args, operation).records, events: 1 },
});

/** `Query.event`: one event. */
export const eventById: Rule = () => ({ calls: 1, below: { records: 1, events: 1 } });

/** `Query.events`: one call per id. */
export const eventsByIds: Rule = (_scope, args) => {
  const ids = Array.isArray(args.eventIds) ? args.eventIds.length : 1;
  return { calls: ids, below: { records: ids, events: ids } };
};

/**
 * `node`: one record per id (a group code, question or custom field is one list call, an attendee
 * none); a hotel reached by id may ask once more for its partner id.
 */
export const nodeById: Rule = () => ({ calls: 2, below: { records: 1, events: 1 } });

/** `nodes`: as `node`, for each id. */
export const nodesByIds: Rule = (_scope, args) => {
  const ids = Array.isArray(args.ids) ? args.ids.length : 1;
  return { calls: 2 * ids, below: { records: ids, events: ids } };
};

/** The licensee's default questions: one list. */
export const defaultQuestionList: Rule = () => ({ calls: 1, below: { records: LIST_RECORDS, events: 1 } });

/** Custom fields: one list, of one event or (without eventId) of every event. */
export const customFieldList: Rule = (_scope, args) => ({
  calls: 1,
  below: { records: LIST_RECORDS, events: args.eventId == null ? UNSCOPED_EVENTS : 1 },
});

/** Every field of every event, one call for the whole operation (a value's custom field). */
export const everyCustomField: Rule = () => ({ calls: 1, below: { records: LIST_RECORDS, events: UNSCOPED_EVENTS } });

/** Each record looks up its own reservation by number (an answer's reservation). */
export const reservationOfEach: Rule = (scope) => ({ calls: scope.records, below: scope });

/**
 * A write's payload comes back with the write; only a value's reservation is looked up (and the
 * custom fields, to find the reservation's event).
 */
export const reservationOfValue: Rule = () => ({ calls: 2, below: { records: 1, events: 1 } });

/** Each entity type's references, grouped by the event their key names (`-` for keys without one). */
function referencesByType(args: Args): Map<string, Map<string, number>> {
  const byType = new Map<string, Map<string, number>>();
  for (const ref of Array.isArray(args.representations) ? args.representations : []) {
    if (ref === null || typeof ref !== 'object') continue;
    const { __typename: type, eventId } = ref as Record<string, unknown>;
    if (typeof type !== 'string') continue;
    const events = byType.get(type) ?? new Map<string, number>();
    const event = eventId == null ? '-' : String(eventId);
    events.set(event, (events.get(event) ?? 0) + 1);
    byType.set(type, events);
  }
  return byType;
}

/**
 * Other subgraphs' references (resolvers/entities.ts), by type: an event, an event's hotels or
 * questions cost one call per distinct event; an attendee none; custom fields one list; an event's
 * reservations one lookup each up to RESERVATION_LOOKUPS_MAX, past it the page count and then
 * either fewer pages than references or one lookup each (at most one call more).
 */
export const entityReferences: Rule = (_scope, args) => {
  let calls = 0;
  const belowByType: Record<string, Scope> = {};
  for (const [type, events] of referencesByType(args)) {
    const records = [...events.values()].reduce((a, b) => a + b, 0);
    const distinct = events.size;
    belowByType[type] = { records, events: distinct };
    if (type === 'Event' || type === 'Hotel' || type === 'EventQuestion') calls += distinct;
    else if (type === 'CustomField') calls += 1;
    else if (type === 'Reservation') for (const n of events.values()) calls += n <= RESERVATION_LOOKUPS_MAX ? n : n + 1;
    else if (type === 'Attendee') belowByType[type] = { records, events: records };
  }
  return { calls, belowByType };
};

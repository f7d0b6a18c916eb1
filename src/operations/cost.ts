import {
  getArgumentValues,
  getNamedType,
  getVariableValues,
  isAbstractType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { RESERVATION_LOOKUPS_MAX } from '../resolvers/entities.ts';
import { DEFAULT_WINDOW, MAX_SEEK_PAGES, MAX_STREAMED_WINDOW, MAX_WINDOW, UPSTREAM_PAGE } from '../connections/window.ts';
import { isStreamed } from '../schema/streamed-edges.ts';
import { schema as gatewaySchema } from '../schema/index.ts';
import { flattenFields } from '../schema/selection.ts';

/**
 * An upper estimate of the upstream calls an operation can make, from its document and coerced
 * variables, before anything runs: the licensee's budget is 240 calls a minute, and one careless
 * query (an attendee's reservations under each of 5000 reservations) must not spend it for everyone.
 *
 * The walk follows the schema's types, so a rule belongs to a parent type and a field
 * (`Reservation.event`, not every field called `event`). At each level it knows how many distinct
 * objects the level can hold and how many distinct events they belong to: the request's calls (resolvers/request-calls.ts)
 * make one call per distinct key, so an event's hotels cost one call per event however many of its
 * reservations ask, while a reservation looked up by number costs one call per answer that asks.
 */

type Args = Record<string, unknown>;

/** Distinct objects a level of the result can hold, and the distinct events they belong to. */
interface Scope {
  records: number;
  events: number;
}

interface FieldCost {
  calls: number;
  /** The scope of the field's own selection; the parent's when absent. */
  below?: Scope;
  /** For a field of an abstract type whose members come in known numbers (`_entities`): the scope per type; a type not named has none. */
  belowByType?: Record<string, Scope>;
}

type Rule = (scope: Scope, args: Args, field: FieldNode, walk: Walk) => FieldCost;

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

const oncePerEvent: Rule = (scope) => ({ calls: scope.events, below: { records: scope.events, events: scope.events } });
const listPerEvent: Rule = (scope) => ({ calls: scope.events, below: { records: scope.events * LIST_RECORDS, events: scope.events } });
/** A hotel of the record's event: one gethotels per event serves every hotel lookup of it. */
const hotelOfEvent: Rule = (scope) => ({ calls: scope.events, below: scope });

/** Records a connection window can hold, and the upstream calls it can make (connections/window.ts). */
function window(field: FieldNode, args: Args, walk: Walk): { records: number; pages: number } {
  const first = typeof args.first === 'number' ? args.first : undefined;
  const last = typeof args.last === 'number' ? args.last : undefined;
  const selected = flattenFields(field.selectionSet, walk.fragments);
  // Streamed edges allow a larger window (connections/window.ts); each of its pages is still a call.
  const edges = selected.filter((f) => f.name.value === 'edges');
  const streamed = first !== undefined && last === undefined && args.before == null && edges.length > 0 && edges.every((f) => isStreamed(f, walk.variables));
  const records = Math.max(0, Math.min(first ?? last ?? DEFAULT_WINDOW, streamed ? MAX_STREAMED_WINDOW : MAX_WINDOW));
  const names = new Set(selected.map((f) => f.name.value));
  const readsWindow = names.has('edges') || names.has('pageInfo');
  const asksNextPage = selected.some((f) => f.name.value === 'pageInfo' && flattenFields(f.selectionSet, walk.fragments).some((g) => g.name.value === 'hasNextPage'));
  const cursors = (args.after == null ? 0 : 1) + (args.before == null ? 0 : 1);
  const pages = readsWindow ? windowPages(records, { fromStart: cursors === 0 && last === undefined, asksNextPage, cursors }) : 0;
  // totalCount, and last without before, cost the page count and the last page.
  const counted = names.has('totalCount') || last !== undefined;
  return { records, pages: pages + (counted ? 2 : 0) };
}

/** The pages a window of `records` can read. */
function windowPages(records: number, { fromStart, asksNextPage, cursors }: { fromStart: boolean; asksNextPage: boolean; cursors: number }): number {
  const spanned = Math.ceil(records / UPSTREAM_PAGE);
  // From the start of the list: its own pages, and the page after when the window ends where a
  // page does and hasNextPage asks what follows.
  if (fromStart) return spanned + (records % UPSTREAM_PAGE === 0 && asksNextPage ? 1 : 0);
  // Elsewhere one page more: the window straddles a boundary, or ends on one and reads ahead (never
  // both). A cursor is placed by its record's key: checking the next key reads a page the window
  // reads anyway, but in a list that changed since, the seek may read up to MAX_SEEK_PAGES more.
  return spanned + 1 + cursors * MAX_SEEK_PAGES;
}

/** An event's paged list (reservations, answers): its pages once per event. */
const pagedPerEvent: Rule = (scope, args, field, walk) => {
  const { records, pages } = window(field, args, walk);
  return { calls: scope.events * pages, below: { records: scope.events * records, events: scope.events } };
};

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
const entities: Rule = (_scope, args) => {
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

/** Upstream calls by parent type and field; a field not listed costs nothing and keeps its parent's scope. */
const RULES: Record<string, Rule> = {
  'Query.event': () => ({ calls: 1, below: { records: 1, events: 1 } }),
  'Query.events': (_scope, args) => {
    const ids = Array.isArray(args.eventIds) ? args.eventIds.length : 1;
    return { calls: ids, below: { records: ids, events: ids } };
  },
  // One record per id (a group code, question or custom field is one list call, an attendee none); a hotel reached by id may ask once more for its partner id.
  'Query.node': () => ({ calls: 2, below: { records: 1, events: 1 } }),
  'Query.nodes': (_scope, args) => {
    const ids = Array.isArray(args.ids) ? args.ids.length : 1;
    return { calls: 2 * ids, below: { records: ids, events: ids } };
  },
  'Query._entities': entities,
  'Query.groupCodeLink': () => ({ calls: 1 }),
  'Query.editReservationLink': () => ({ calls: 1 }),
  'Query.defaultQuestions': () => ({ calls: 1, below: { records: LIST_RECORDS, events: 1 } }),
  'Query.customFields': (_scope, args) => ({ calls: 1, below: { records: LIST_RECORDS, events: args.eventId == null ? UNSCOPED_EVENTS : 1 } }),

  'Event.hotels': listPerEvent,
  'Event.groupCodes': listPerEvent,
  'Event.pickup': listPerEvent,
  'Event.shoppingViewHotels': listPerEvent,
  'Event.questions': listPerEvent,
  'Event.customFields': listPerEvent,
  'Event.hotel': oncePerEvent,
  // By number within the event: one getreservation per event that asks.
  'Event.reservation': oncePerEvent,
  'Event.reservations': pagedPerEvent,
  'Event.attendeeAnswers': pagedPerEvent,

  'Reservation.event': oncePerEvent,
  'Reservation.hotel': hotelOfEvent,
  'GroupCode.hotel': hotelOfEvent,
  'RoomPickup.hotel': hotelOfEvent,
  'ShoppingViewHotel.hotel': hotelOfEvent,
  // An attendee's reservations of one event are few: one page, read whole, per attendee.
  'Attendee.reservations': (scope, args, field, walk) => ({ calls: scope.records, below: { records: scope.records * window(field, args, walk).records, events: 1 } }),
  // Each answer looks up its own reservation by number; its question comes with the event's list.
  'AttendeeAnswer.reservation': (scope) => ({ calls: scope.records, below: scope }),
  'AttendeeAnswer.question': oncePerEvent,
  'CustomField.event': oncePerEvent,
  // Every field of every event, one call for the whole operation.
  'CustomFieldValue.customField': () => ({ calls: 1, below: { records: LIST_RECORDS, events: UNSCOPED_EVENTS } }),

  // A write's payload comes back with the write; only a value's reservation is looked up (and the
  // custom fields, to find the reservation's event).
  'SetCustomFieldValuePayload.reservation': () => ({ calls: 2, below: { records: 1, events: 1 } }),
};

interface Walk {
  schema: GraphQLSchema;
  fragments: Record<string, FragmentDefinitionNode>;
  variables: Args;
  /** The walk stops adding once past it: the operation is refused either way. */
  limit: number;
  /** Per selection set (a fragment's included), type and scope: a fragment spread at many places is walked once. */
  memo: Map<SelectionSetNode, Map<string, number>>;
}

/** The calls of a selection set on objects of `type` in `scope`. */
function selectionCost(set: SelectionSetNode, type: GraphQLObjectType, scope: Scope, walk: Walk): number {
  const key = `${type.name}|${scope.records}|${scope.events}`;
  const known = walk.memo.get(set)?.get(key);
  if (known !== undefined) return known;
  const applies = (condition: string | undefined) => {
    if (condition === undefined || condition === type.name) return true;
    const named = walk.schema.getType(condition);
    return named !== undefined && isAbstractType(named) && walk.schema.isSubType(named, type);
  };
  let total = 0;
  for (const field of flattenFields(set, walk.fragments, applies)) {
    total += fieldCost(field, type, scope, walk);
    // Every part is added to the whole, so a part past the limit is enough to refuse.
    if (total > walk.limit) break;
  }
  if (!walk.memo.has(set)) walk.memo.set(set, new Map());
  walk.memo.get(set)!.set(key, total);
  return total;
}

function fieldCost(field: FieldNode, parent: GraphQLObjectType, scope: Scope, walk: Walk): number {
  const definition = parent.getFields()[field.name.value];
  if (!definition) return 0; // __typename and the introspection fields
  let args: Args;
  try {
    args = getArgumentValues(definition, field, walk.variables);
  } catch {
    return 0; // arguments that do not coerce fail the field before its resolver runs
  }
  const own = RULES[`${parent.name}.${field.name.value}`]?.(scope, args, field, walk) ?? { calls: 0 };
  if (!field.selectionSet) return own.calls;
  const below = own.below ?? scope;
  const type = getNamedType(definition.type);
  const types = isObjectType(type) ? [type] : isAbstractType(type) ? walk.schema.getPossibleTypes(type) : [];
  // An object is of one type only: the sum over the possible types is an upper bound.
  return types.reduce((sum, possible) => {
    const typeScope = own.belowByType ? own.belowByType[possible.name] : below;
    return typeScope ? sum + selectionCost(field.selectionSet!, possible, typeScope, walk) : sum;
  }, own.calls);
}

/**
 * The estimate for the operation that will run, on its variables as coerced (defaults included).
 * With `limit`, the walk stops as soon as the estimate passes it, and answers what it has counted.
 */
export function estimateUpstreamCalls(
  document: DocumentNode,
  variables: Args = {},
  operationName?: string | null,
  limit = Infinity,
  schema: GraphQLSchema = gatewaySchema,
): number {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations[0];
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return 0;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
  // Variables that do not coerce fail the whole operation before anything runs.
  if (coerced.errors) return 0;
  const fragments = Object.fromEntries(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  const walk: Walk = { schema, fragments, variables: coerced.coerced, limit, memo: new Map() };
  if (operation.operation !== 'mutation') return selectionCost(operation.selectionSet, root, { records: 1, events: 1 }, walk);
  // Each mutation field is one write, sent every time (writes are not deduplicated).
  return flattenFields(operation.selectionSet, fragments).reduce((sum, field) => {
    if (sum > limit) return sum;
    return sum + 1 + fieldCost(field, root, { records: 1, events: 1 }, walk);
  }, 0);
}

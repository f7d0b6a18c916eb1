import { Kind, type DocumentNode, type FieldNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode, type ValueNode } from 'graphql';
import { DEFAULT_WINDOW, UPSTREAM_PAGE } from '../resolvers/paging.ts';

/**
 * An upper estimate of the upstream calls an operation can make, from its document and variables,
 * before anything runs: the licensee's budget is 240 calls a minute, and one careless query (an
 * attendee's reservations under each of 5000 reservations) must not spend it for everyone.
 * Shared lookups (an event's hotels, the event itself, custom fields, questions) count once per
 * occurrence in the document; per-record lookups count once per record of the window above them.
 */

type Vars = Record<string, unknown>;

interface Walk {
  fragments: Record<string, FragmentDefinitionNode>;
  variables: Vars;
}

function value(node: ValueNode | undefined, w: Walk): unknown {
  if (!node) return undefined;
  switch (node.kind) {
    case Kind.VARIABLE:
      return w.variables[node.name.value];
    case Kind.INT:
      return Number(node.value);
    case Kind.LIST:
      return node.values.map((v) => value(v, w));
    case Kind.NULL:
      return null;
    default:
      return 'value' in node ? node.value : undefined;
  }
}

function arg(field: FieldNode, name: string, w: Walk): unknown {
  return value(field.arguments?.find((a) => a.name.value === name)?.value, w);
}

function fields(set: SelectionSetNode | undefined, w: Walk): FieldNode[] {
  const out: FieldNode[] = [];
  for (const s of set?.selections ?? []) {
    if (s.kind === Kind.FIELD) out.push(s);
    else if (s.kind === Kind.INLINE_FRAGMENT) out.push(...fields(s.selectionSet, w));
    else out.push(...fields(w.fragments[s.name.value]?.selectionSet, w));
  }
  return out;
}

/** Records a connection window can hold, and the upstream pages it can touch. */
function window(field: FieldNode, w: Walk): { records: number; pages: number } {
  const first = arg(field, 'first', w);
  const last = arg(field, 'last', w);
  const size = typeof first === 'number' ? first : typeof last === 'number' ? last : DEFAULT_WINDOW;
  const records = Math.max(0, Math.min(size, 5000));
  const selected = new Set(fields(field.selectionSet, w).map((f) => f.name.value));
  // One page more when the window straddles a boundary or hasNextPage asks for the page count.
  const pages = selected.has('edges') || selected.has('pageInfo') ? Math.ceil(records / UPSTREAM_PAGE) + 1 : 0;
  // totalCount, and last without before, cost the page count and the last page.
  const counted = selected.has('totalCount') || typeof last === 'number';
  return { records, pages: pages + (counted ? 2 : 0) };
}

/** Lookups served by one shared call however many records ask (the loaders dedupe them). */
const SHARED = new Set(['hotel', 'event', 'question', 'customField']);
/** Lists of an event: one call per event. */
const PER_EVENT = new Set(['hotels', 'groupCodes', 'pickup', 'shoppingViewHotels', 'questions', 'customFields', 'defaultQuestions', 'groupCodeLink', 'editReservationLink']);

/** The calls of one selection resolved `times` times. */
function cost(set: SelectionSetNode | undefined, times: number, w: Walk): number {
  let total = 0;
  for (const f of fields(set, w)) {
    const name = f.name.value;
    const below = (n: number) => cost(f.selectionSet, n, w);
    if (SHARED.has(name) && f.selectionSet) {
      total += 1 + below(times);
    } else if (PER_EVENT.has(name)) {
      total += times + below(times);
    } else if (name === 'reservation') {
      // A reservation by number: one getreservation per record that asks.
      total += times + below(times);
    } else if (name === 'events' || name === 'node' || name === 'nodes') {
      const ids = arg(f, name === 'events' ? 'eventIds' : name === 'node' ? 'id' : 'ids', w);
      const n = Array.isArray(ids) ? ids.length : 1;
      // A hotel reached by id may ask once more for its partner id.
      total += (name === 'events' ? 1 : 2) * times * n + below(times * n);
    } else if (name === 'reservations' || name === 'attendeeAnswers') {
      const win = window(f, w);
      // An attendee's reservations (they take an eventId) are few: one page, read whole.
      const pages = f.arguments?.some((a) => a.name.value === 'eventId') ? 1 : win.pages;
      const nodes = fields(f.selectionSet, w)
        .filter((x) => x.name.value === 'edges')
        .flatMap((e) => fields(e.selectionSet, w))
        .filter((x) => x.name.value === 'node');
      total += times * pages + nodes.reduce((sum, node) => sum + cost(node.selectionSet, times * win.records, w), 0);
    } else if (f.selectionSet) {
      total += below(times);
    }
  }
  return total;
}

/** The estimate for the operation that will run: reads as above, and one call per mutation field. */
export function estimateUpstreamCalls(document: DocumentNode, variables: Vars = {}, operationName?: string | null): number {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations[0];
  if (!operation) return 0;
  const fragments = Object.fromEntries(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]),
  );
  const w = { fragments, variables };
  if (operation.operation !== 'mutation') return cost(operation.selectionSet, 1, w);
  // A payload's own objects come back with the write; only its reservation is looked up (and the
  // custom fields, to find the reservation's event).
  const payload = (f: FieldNode) =>
    fields(f.selectionSet, w).reduce((sum, c) => sum + (c.name.value === 'reservation' ? 2 : 0) + cost(c.selectionSet, 1, w), 0);
  return fields(operation.selectionSet, w).reduce((sum, f) => sum + 1 + payload(f), 0);
}

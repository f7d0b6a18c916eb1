import {
  type ConstDirectiveNode,
  type DocumentNode,
  type FieldDefinitionNode,
  type FieldNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  getArgumentValues,
  getNamedType,
  getNullableType,
  isListType,
  isObjectType,
  Kind,
  type ObjectTypeDefinitionNode,
  parseConstValue,
  type SelectionSetNode,
} from 'graphql';
import { type Args, ruleOf } from './cost.ts';

/**
 * What a federation router sees of each field's upstream cost: Federation v2.9's `@cost` and
 * `@listSize` (the IBM cost spec, as Apollo Router's `demand_control` and Hive Gateway's
 * `demandControl` estimate it), derived from the rule the field declares (cost.ts), never written
 * by hand, so they cannot drift apart.
 *
 * A router multiplies each field's weight by the sizes of the lists above it (and, Hive Gateway,
 * by its own list size); an object type costs 1 unless it says otherwise. Our estimate counts
 * upstream calls instead: so every object type of ours carries `@cost(weight: 0)` (an object
 * costs nothing of its own), and a field carries the calls its rule makes for one parent record
 * alone in its event, with its default arguments and every field below it selected:
 *
 * - a connection (`first`/`last` and `edges`) is sized by its slicing arguments: its records are
 *   what a per-record lookup below it is multiplied by, as in our estimate; its weight is the
 *   default window's pages with `totalCount`;
 * - a plain list is sized by the events its items span (our estimate shares every lookup below a
 *   plain list once per event: no per-record lookup hangs below one), so a router counts the
 *   lookups below it as we do.
 *
 * Where the router's model cannot follow ours it counts more, not less, except as docs/federating.md
 * says (a window's later pages, a connection without `first`/`last`, `_entities`).
 */

export interface RouterCost {
  /** `@cost(weight:)` of the field; no directive when 0. */
  weight: number;
  /** `@listSize`: a connection's slicing arguments, or a plain list's assumed size. */
  listSize?: { connection: true } | { assumedSize: number };
}

/** A connection's `@listSize`: sized by `first` or `last`, on its `edges`. */
export const CONNECTION_LIST_SIZE =
  'slicingArguments: ["first", "last"], sizedFields: ["edges"], requireOneSlicingArgument: false';

const ONE_RECORD = { records: 1, events: 1 };

/** The router's view of one field of an object type, from the rule the field declares. */
export function routerCostOf(type: GraphQLObjectType, field: GraphQLField<unknown, unknown>): RouterCost {
  const node = referenceSelection(field);
  let args: Args = {};
  try {
    args = getArgumentValues(field, node, {});
  } catch {
    // A required argument: the rule reads what it is given, the defaults of the others.
  }
  const rule = ruleOf(field);
  const cost = rule?.(ONE_RECORD, args, node, { fragments: {}, variables: {} }) ?? { calls: 0 };
  const nullable = getNullableType(field.type);
  if (isConnection(field)) return { weight: cost.calls, listSize: { connection: true } };
  // A connection's edges are sized by the connection's slicing arguments (`sizedFields`).
  if (!isListType(nullable) || isSizedByConnection(type, field)) return { weight: cost.calls };
  return { weight: cost.calls, listSize: { assumedSize: Math.max(1, cost.below?.events ?? ONE_RECORD.events) } };
}

/** A Relay connection: `first`/`last` arguments and a type with `edges`. */
export function isConnection(field: GraphQLField<unknown, unknown>): boolean {
  const type = getNamedType(field.type);
  const names = new Set(field.args.map((arg) => arg.name));
  return isObjectType(type) && 'edges' in type.getFields() && names.has('first') && names.has('last');
}

/** A connection type's `edges`. */
function isSizedByConnection(type: GraphQLObjectType, field: GraphQLField<unknown, unknown>): boolean {
  return field.name === 'edges' && 'pageInfo' in type.getFields();
}

/** Whether the router's view gives this type `@cost(weight: 0)`: every object type of ours but the roots. */
export function costsNothingOfItsOwn(type: GraphQLNamedType, schema: GraphQLSchema): boolean {
  return (
    isObjectType(type) &&
    !type.name.startsWith('_') &&
    type !== schema.getQueryType() &&
    type !== schema.getMutationType() &&
    type !== schema.getSubscriptionType()
  );
}

/** The field as selected with every field of its type, and of theirs (connections: edges, pageInfo, totalCount). */
function referenceSelection(field: GraphQLField<unknown, unknown>): FieldNode {
  return { kind: Kind.FIELD, name: { kind: Kind.NAME, value: field.name }, selectionSet: everyField(field, 2) };
}

function everyField(field: GraphQLField<unknown, unknown>, depth: number): SelectionSetNode | undefined {
  const type = getNamedType(field.type);
  if (!isObjectType(type) || depth === 0) return undefined;
  return {
    kind: Kind.SELECTION_SET,
    selections: Object.values(type.getFields()).map((child) => ({
      kind: Kind.FIELD,
      name: { kind: Kind.NAME, value: child.name },
      selectionSet: everyField(child, depth - 1),
    })),
  };
}

/** The SDL of the subgraph (federation's printer reads it) with each field's and type's router cost. */
export function withRouterCosts(document: DocumentNode, schema: GraphQLSchema): DocumentNode {
  return {
    ...document,
    definitions: document.definitions.map((definition) => {
      if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION && definition.kind !== Kind.OBJECT_TYPE_EXTENSION)
        return definition;
      const type = schema.getType(definition.name.value);
      if (!isObjectType(type)) return definition;
      const own = definition.kind === Kind.OBJECT_TYPE_DEFINITION && costsNothingOfItsOwn(type, schema);
      return {
        ...definition,
        directives: [...(definition.directives ?? []), ...(own ? [directive('cost', 'weight: 0')] : [])],
        fields: definition.fields?.map((node) => annotated(node, type)),
      } as ObjectTypeDefinitionNode;
    }),
  };
}

function annotated(node: FieldDefinitionNode, type: GraphQLObjectType): FieldDefinitionNode {
  const field = type.getFields()[node.name.value];
  if (!field) return node;
  const { weight, listSize } = routerCostOf(type, field);
  const added: ConstDirectiveNode[] = [];
  if (weight > 0) added.push(directive('cost', `weight: ${weight}`));
  if (listSize)
    added.push(
      directive('listSize', 'connection' in listSize ? CONNECTION_LIST_SIZE : `assumedSize: ${listSize.assumedSize}`),
    );
  return added.length === 0 ? node : { ...node, directives: [...(node.directives ?? []), ...added] };
}

/** `@name(args)` as an AST node, its arguments parsed from their SDL. */
function directive(name: string, args: string): ConstDirectiveNode {
  const value = parseConstValue(`{ ${args} }`);
  if (value.kind !== Kind.OBJECT) throw new Error(`bad arguments for @${name}: ${args}`);
  return {
    kind: Kind.DIRECTIVE,
    name: { kind: Kind.NAME, value: name },
    arguments: value.fields.map((f) => ({ kind: Kind.ARGUMENT, name: f.name, value: f.value })),
  };
}

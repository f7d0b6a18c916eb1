import {
  type DocumentNode,
  type FieldNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  getArgumentValues,
  getNamedType,
  isAbstractType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type VariableDefinitionNode,
} from 'graphql';
import { type Args, type Operation, ruleOf, type Scope } from '../schema/cost.ts';
import { schema as gatewaySchema } from '../schema/index.ts';
import { flattenFields, fragmentsOf } from '../schema/selection.ts';
import { coercedVariables } from './coerced-variables.ts';

/**
 * An upper estimate of the upstream calls an operation can make, from its document and coerced
 * variables, before anything runs: the licensee's budget is 240 calls a minute, and one careless
 * query (an attendee's reservations under each of 5000 reservations) must not spend it for everyone.
 *
 * The walk follows the schema's types and adds what each selected field's rule says it costs at
 * its level: every field declares its rule where it is defined (schema/cost.ts says how).
 */

interface Walk extends Operation {
  schema: GraphQLSchema;
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
  // A field without a rule is refused by test/schema/cost.test.ts; a schema passed in may still have one.
  const own = ruleOf(definition)?.(scope, args, field, walk) ?? { calls: 0 };
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
  // The same document with the same variables costs the same: most requests repeat one of a few.
  const key = schema === gatewaySchema ? memoKey(variables, operationName, limit) : undefined;
  let known = key === undefined ? undefined : estimates.get(document);
  const estimate = key === undefined ? undefined : known?.get(key);
  if (estimate !== undefined) return estimate;
  const calls = walkedEstimate(document, variables, operationName, limit, schema);
  if (key === undefined) return calls;
  if (!known) estimates.set(document, (known = new Map()));
  else if (known.size >= ESTIMATES_PER_DOCUMENT) known.clear();
  known.set(key, calls);
  return calls;
}

/** Per parsed document (Yoga's parse cache hands the same one to each request of a document). */
const estimates = new WeakMap<DocumentNode, Map<string, number>>();
const ESTIMATES_PER_DOCUMENT = 64;
/** Variables longer than this as JSON (a mutation's input) are not kept as a key. */
const LONGEST_KEY = 1024;
const NO_DEFINITIONS: readonly VariableDefinitionNode[] = [];

function memoKey(variables: Args, operationName: string | null | undefined, limit: number): string | undefined {
  const json = JSON.stringify(variables);
  return json.length > LONGEST_KEY ? undefined : `${operationName ?? ''}|${limit}|${json}`;
}

function walkedEstimate(
  document: DocumentNode,
  variables: Args,
  operationName: string | null | undefined,
  limit: number,
  schema: GraphQLSchema,
): number {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName ? operations.find((o) => o.name?.value === operationName) : operations[0];
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return 0;
  const coerced = coercedVariables(schema, operation.variableDefinitions ?? NO_DEFINITIONS, variables);
  // Variables that do not coerce fail the whole operation before anything runs.
  if (coerced.errors) return 0;
  const walk: Walk = { schema, fragments: fragmentsOf(document), variables: coerced.coerced, limit, memo: new Map() };
  // A mutation's fields are counted as any other: each declares its write (schema/cost.ts, oneWrite).
  return selectionCost(operation.selectionSet, root, { records: 1, events: 1 }, walk);
}

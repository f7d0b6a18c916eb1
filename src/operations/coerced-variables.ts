import { type GraphQLSchema, getVariableValues, type VariableDefinitionNode } from 'graphql';

type CoercedVariableValues = ReturnType<typeof getVariableValues>;

/**
 * An operation's variables coerced once per request: the cost limit and the compiled executor's
 * check (jit.ts) read the same coercion, keyed by the variables object the request carries (Yoga
 * hands the same one to every `onExecute` hook) and the operation's definitions.
 */
const coercions = new WeakMap<
  object,
  { schema: GraphQLSchema; definitions: readonly VariableDefinitionNode[]; coerced: CoercedVariableValues }
>();

/** At most this many errors are reported, as Yoga's executor does. */
const MAX_ERRORS = 50;

export function coercedVariables(
  schema: GraphQLSchema,
  definitions: readonly VariableDefinitionNode[],
  inputs: Record<string, unknown>,
): CoercedVariableValues {
  const known = coercions.get(inputs);
  if (known?.definitions === definitions && known.schema === schema) return known.coerced;
  const coerced = getVariableValues(schema, definitions, inputs, { maxErrors: MAX_ERRORS });
  coercions.set(inputs, { schema, definitions, coerced });
  return coerced;
}

import {
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLSchema,
  isObjectType,
  valueFromASTUntyped,
} from 'graphql';
import type { Scope } from '../config/licensees.ts';

/**
 * The scope each root field needs, declared on the field next to its cost (`...costs(rule),
 * ...needs('read')`) as Apollo Federation's own directive, `@requiresScopes(scopes: [["read"]])`.
 * That one declaration has two readers: the subgraph SDL carries it, so a company router with its
 * own JWT authentication refuses before it plans (docs/federating.md), and @envelop/generic-auth
 * reads the same directive here (auth/scopes.ts), on every door. A root field without one is a
 * failing test (test/schema/scopes.test.ts), not a field anyone may run.
 *
 * Only root fields declare a scope: everything below one is reached through it, or through
 * `_entities`, which needs `read`. A scope on an object field would refuse a mutation's payload to
 * a client allowed to write but not to read, and say nothing a router does not already refuse at
 * the root.
 */

/** Field options of a root field an operation may select only with `scope`. */
export const needs = (scope: Scope) => ({ directives: { requiresScopes: { scopes: [[scope]] } } });

/** Field options of a root field any client with a credential may select (`@authenticated`). */
export const needsACredential = { directives: { authenticated: {} } };

/**
 * The same declaration on a field built with graphql-js rather than Pothos (federation's own
 * `_entities` and `_service`): the directives in the `extensions` form graphql-tools reads.
 */
export function directivesOf(options: { directives: Record<string, object> }): Record<string, object[]> {
  return Object.fromEntries(Object.entries(options.directives).map(([name, args]) => [name, [args]]));
}

/** What a field declares: the scopes it needs (any one list of them, all of that list), a credential only, or nothing. */
export type Requirement = { scopes: string[][] } | 'authenticated' | undefined;

/** The requirement a field declares, read where generic-auth reads it: the field's AST (Pothos) or its `extensions`. */
export function requirementOf(field: GraphQLField<unknown, unknown>): Requirement {
  const applied = new Map<string, Record<string, unknown>>();
  for (const directive of field.astNode?.directives ?? [])
    applied.set(
      directive.name.value,
      Object.fromEntries((directive.arguments ?? []).map((arg) => [arg.name.value, valueFromASTUntyped(arg.value)])),
    );
  const extended = field.extensions?.directives;
  if (extended && typeof extended === 'object' && !Array.isArray(extended))
    for (const [name, args] of Object.entries(extended as Record<string, unknown>))
      applied.set(name, ((Array.isArray(args) ? args[0] : args) ?? {}) as Record<string, unknown>);
  const scopes = applied.get('requiresScopes')?.scopes;
  if (Array.isArray(scopes)) return { scopes: scopes as string[][] };
  return applied.has('authenticated') ? 'authenticated' : undefined;
}

function rootTypes(schema: GraphQLSchema): GraphQLObjectType[] {
  return [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].filter(
    (type): type is GraphQLObjectType => type != null,
  );
}

/** `Type.field` of every root field that declares no scope (nor `@authenticated`). */
export function rootFieldsWithoutScope(schema: GraphQLSchema): string[] {
  return rootTypes(schema).flatMap((type) =>
    Object.values(type.getFields())
      .filter((field) => requirementOf(field) === undefined)
      .map((field) => `${type.name}.${field.name}`),
  );
}

/** `Type.field` of every field below the roots that declares a scope: the root field is its one home. */
export function fieldsScopedBelowRoot(schema: GraphQLSchema): string[] {
  const roots = new Set<unknown>(rootTypes(schema));
  return Object.values(schema.getTypeMap())
    .filter(isObjectType)
    .filter((type) => !roots.has(type) && !type.name.startsWith('__'))
    .flatMap((type) =>
      Object.values(type.getFields())
        .filter((field) => requirementOf(field) !== undefined)
        .map((field) => `${type.name}.${field.name}`),
    );
}

import federation from '@apollo/federation-internals';
import { AnyType, EntityType, entitiesField, ServiceType } from '@apollo/subgraph/dist/types.js';
import { hasResolvableKey } from '@pothos/plugin-federation';
import {
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLUnionType,
  isObjectType,
} from 'graphql';
import { checkRepresentations } from '../resolvers/entities.ts';
import { costs, costsNothing, entityReferences } from './cost.ts';
import { withRouterCosts } from './router-cost.ts';
import { directivesOf, needs, needsACredential } from './scopes.ts';

/**
 * The built schema (its federation directives and entities from @pothos/plugin-federation) with the
 * root fields every subgraph serves: `_service { sdl }` (the schema as composition sees it) and
 * `_entities(representations:)` (other subgraphs' references to our entities).
 *
 * The plugin's `builder.toSubGraphSchema` would add them too, but it always passes the schema
 * through graphql-js's `lexicographicSortSchema`, which also sorts enum values: the contract's
 * enums keep their lifecycle order (NEW, ACCEPTED, …), and the API keeps its field order. Its
 * `_entities` also resolves each reference as it reads it; ours checks them all before any call.
 */
export function toSubgraphSchema(schema: GraphQLSchema): { schema: GraphQLSchema; sdl: () => string } {
  const query = schema.getQueryType();
  if (!query) throw new Error('a subgraph needs a Query type');
  // Federation's own types, described like every type of ours.
  const entities = new GraphQLUnionType({
    ...EntityType.toConfig(),
    description: 'Every type other subgraphs can reference by its key.',
    types: Object.values(schema.getTypeMap()).filter(
      (type) => isObjectType(type) && hasResolvableKey(type),
    ) as GraphQLObjectType[],
  });
  const any = new GraphQLScalarType({
    ...AnyType.toConfig(),
    description: 'A reference: `__typename` and the fields of one of its type’s keys.',
  });
  const serviceConfig = ServiceType.toConfig();
  const service = new GraphQLObjectType({
    ...serviceConfig,
    description: 'This subgraph, as composition sees it.',
    fields: Object.fromEntries(
      Object.entries(serviceConfig.fields).map(([name, field]) => [name, { ...field, ...costsNothing }]),
    ),
  });
  let printed: string | undefined;
  // Printed on first ask: federation's printer weighs 2 MiB of heap that a gateway no composer asks never needs.
  const sdl = (): string => (printed ??= printSubgraphSchema(subgraph));
  const subgraphQuery = new GraphQLObjectType({
    ...query.toConfig(),
    fields: () => ({
      _entities: {
        description:
          'Entities of this subgraph by their keys, for the federation gateway; null for a reference to nothing.',
        type: new GraphQLNonNull(new GraphQLList(entities)),
        args: {
          representations: {
            type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(any))),
            description: 'The references, in the order the answer keeps.',
          },
        },
        // A reference reads what a query reads.
        extensions: { ...costs(entityReferences).extensions, directives: directivesOf(needs('read')) },
        resolve: (root, args: { representations: unknown[] }, ctx, info) => {
          checkRepresentations(args.representations);
          return entitiesField.resolve!(root, args, ctx, info);
        },
      },
      _service: {
        type: new GraphQLNonNull(service),
        description: 'This subgraph’s schema, for composition.',
        // The published schema: any credential will do (every request needs one: auth/plugin.ts), no scope.
        extensions: { ...costsNothing.extensions, directives: directivesOf(needsACredential) },
        resolve: () => ({ sdl: sdl() }),
      },
      ...query.toConfig().fields,
    }),
  });
  const config = schema.toConfig();
  const subgraph = new GraphQLSchema({
    ...config,
    query: subgraphQuery,
    types: config.types.map((type) => (type === query ? subgraphQuery : type)),
  });
  return { schema: subgraph, sdl };
}

/**
 * Federation's own printer (`@apollo/subgraph`'s `printSubgraphSchema`: the schema's AST, checked
 * and printed as a subgraph), with each field's and type's `@cost`/`@listSize` (router-cost.ts)
 * added to the AST it prints.
 */
function printSubgraphSchema(schema: GraphQLSchema): string {
  const ast = withRouterCosts(federation.graphQLJSSchemaToAST(schema), schema);
  return federation.buildSubgraph(federation.FEDERATION_UNNAMED_SUBGRAPH_NAME, '', ast, false).toString();
}

import { printSubgraphSchema } from '@apollo/subgraph';
import { AnyType, entitiesField, EntityType, ServiceType } from '@apollo/subgraph/dist/types.js';
import { GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLScalarType, GraphQLSchema, GraphQLUnionType, isObjectType } from 'graphql';
import { checkRepresentations } from '../resolvers/entities.ts';
import { attachDirectiveAst } from './directive-ast.ts';

/** Whether a type is an entity: it has a `@key` (federation.ts `entity`). */
function isEntity(type: unknown): type is GraphQLObjectType {
  const directives = isObjectType(type) ? type.extensions.directives : undefined;
  return Array.isArray(directives) && directives.some((d: { name: string }) => d.name === 'key');
}

/**
 * The built schema as an Apollo Federation v2 subgraph: the directives applied as AST (what the
 * federation printer reads), and the root fields every subgraph serves, `_service { sdl }` (the
 * schema as composition sees it) and `_entities(representations:)` (other subgraphs' references
 * to our entities). Everything else is the schema as built, so a client of this gateway alone
 * sees the same API plus those two fields.
 */
export function toSubgraphSchema(schema: GraphQLSchema): { schema: GraphQLSchema; sdl: string } {
  attachDirectiveAst(schema);
  const query = schema.getQueryType()!;
  // Federation's own types, described like every type of ours.
  const entities = new GraphQLUnionType({
    ...EntityType.toConfig(),
    description: 'Every type other subgraphs can reference by its key.',
    types: Object.values(schema.getTypeMap()).filter(isEntity),
  });
  const any = new GraphQLScalarType({ ...AnyType.toConfig(), description: 'A reference: `__typename` and the fields of one of its type’s keys.' });
  const service = new GraphQLObjectType({ ...ServiceType.toConfig(), description: 'This subgraph, as composition sees it.' });
  let sdl = '';
  const subgraphQuery = new GraphQLObjectType({
    ...query.toConfig(),
    fields: () => ({
      _entities: {
        description: 'Entities of this subgraph by their keys, for the federation gateway; null for a reference to nothing.',
        type: new GraphQLNonNull(new GraphQLList(entities)),
        args: { representations: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(any))), description: 'The references, in the order the answer keeps.' } },
        resolve: (root, args: { representations: unknown[] }, ctx, info) => {
          checkRepresentations(args.representations);
          return entitiesField.resolve!(root, args, ctx, info);
        },
      },
      _service: { type: new GraphQLNonNull(service), description: 'This subgraph’s schema, for composition.', resolve: () => ({ sdl }) },
      ...query.toConfig().fields,
    }),
  });
  const config = schema.toConfig();
  const subgraph = new GraphQLSchema({
    ...config,
    query: subgraphQuery,
    types: config.types.map((type) => (type === query ? subgraphQuery : type)),
  });
  sdl = printSubgraphSchema(subgraph);
  return { schema: subgraph, sdl };
}

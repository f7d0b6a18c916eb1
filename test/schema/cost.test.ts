import SchemaBuilder from '@pothos/core';
import {
  buildSchema,
  type FieldNode,
  GraphQLInt,
  GraphQLObjectType,
  GraphQLSchema,
  type OperationDefinitionNode,
  parse,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { costs, costsNothing, fieldsWithoutCost, oncePerEvent, ruleOf } from '../../src/schema/cost.ts';
import { schema } from '../../src/schema/index.ts';

// The cost estimate reads each field's rule from the field itself: a field that declares none
// would silently cost 0 and let an operation spend the licensee's budget unchecked.
describe('declared upstream costs', () => {
  it('every field of every object type of the gateway declares its cost (a rule, or costsNothing)', () => {
    expect(fieldsWithoutCost(schema)).toEqual([]);
  });

  it('names each field of a schema that declares none, and no other', () => {
    const scratch = buildSchema(
      'type Query { thing: Thing } type Thing { a: Int b: String } interface Named { name: String } input Filter { x: Int }',
    );
    expect(fieldsWithoutCost(scratch)).toEqual(['Query.thing', 'Thing.a', 'Thing.b']);

    const Thing = new GraphQLObjectType({
      name: 'Thing',
      fields: { declared: { type: GraphQLInt, ...costsNothing }, forgotten: { type: GraphQLInt } },
    });
    const query = new GraphQLObjectType({ name: 'Query', fields: { thing: { type: Thing, ...costs(oncePerEvent) } } });
    expect(fieldsWithoutCost(new GraphQLSchema({ query }))).toEqual(['Thing.forgotten']);
  });

  it('reads what Pothos field options declare', () => {
    const builder = new SchemaBuilder({});
    builder.queryType({
      fields: (t) => ({
        declared: t.int({ ...costs(oncePerEvent), resolve: () => 1 }),
        exposed: t.field({ type: 'Int', ...costsNothing, resolve: () => 1 }),
        forgotten: t.int({ resolve: () => 1 }),
      }),
    });
    const built = builder.toSchema();
    expect(fieldsWithoutCost(built)).toEqual(['Query.forgotten']);
    expect(ruleOf(built.getQueryType()!.getFields().declared!)).toBe(oncePerEvent);
  });

  it('counts every mutation field as at least one write', () => {
    const field = (parse('mutation { m }').definitions[0] as OperationDefinitionNode).selectionSet
      .selections[0] as FieldNode;
    const writes = Object.values(schema.getMutationType()!.getFields()).map((f) => [
      f.name,
      ruleOf(f)?.({ records: 1, events: 1 }, {}, field, { fragments: {}, variables: {} }).calls,
    ]);
    expect(writes.length).toBeGreaterThan(0);
    for (const [name, calls] of writes) expect(calls, String(name)).toBeGreaterThanOrEqual(1);
  });
});

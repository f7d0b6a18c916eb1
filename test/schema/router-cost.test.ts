import { readFileSync } from 'node:fs';
import {
  type ConstDirectiveNode,
  type FieldNode,
  type GraphQLField,
  getArgumentValues,
  getNamedType,
  getNullableType,
  isListType,
  isObjectType,
  Kind,
  type ObjectTypeDefinitionNode,
  parse,
  print,
  type SelectionSetNode,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { ruleOf } from '../../src/schema/cost.ts';
import { schema } from '../../src/schema/index.ts';

/**
 * The `@cost`/`@listSize` a router reads (schema.subgraph.graphql, as `_service { sdl }` serves it)
 * say what each field declares it costs (`costs(rule)` / `costsNothing`): a field whose rule and
 * directive disagree fails here, each named.
 */

const sdl = parse(readFileSync(new URL('../../schema.subgraph.graphql', import.meta.url), 'utf8'));
const printed = new Map(
  sdl.definitions
    .filter((d): d is ObjectTypeDefinitionNode => d.kind === Kind.OBJECT_TYPE_DEFINITION)
    .map((d) => [d.name.value, d]),
);
const roots = new Set(['Query', 'Mutation', 'Subscription']);
const CONNECTION =
  '@listSize(slicingArguments: ["first", "last"], sizedFields: ["edges"], requireOneSlicingArgument: false)';

const named = (directives: readonly ConstDirectiveNode[] | undefined, name: string) =>
  (directives ?? []).filter((d) => d.name.value === name).map((d) => print(d));

/** The field with every field below it selected, two levels down (a connection's edges, pageInfo and totalCount). */
function selected(field: GraphQLField<unknown, unknown>, depth = 2): FieldNode {
  const type = getNamedType(field.type);
  const selectionSet: SelectionSetNode | undefined =
    isObjectType(type) && depth > 0
      ? { kind: Kind.SELECTION_SET, selections: Object.values(type.getFields()).map((f) => selected(f, depth - 1)) }
      : undefined;
  return { kind: Kind.FIELD, name: { kind: Kind.NAME, value: field.name }, selectionSet };
}

/** What the field's rule costs for one record alone in its event, default arguments. */
function declared(field: GraphQLField<unknown, unknown>) {
  const node = selected(field);
  let args = {};
  try {
    args = getArgumentValues(field, node, {});
  } catch {}
  return ruleOf(field)!({ records: 1, events: 1 }, args, node, { fragments: {}, variables: {} });
}

const fields = [...printed.values()].flatMap((definition) => {
  const type = schema.getType(definition.name.value);
  if (!isObjectType(type)) return [];
  return (definition.fields ?? []).map((node) => ({ type, node, field: type.getFields()[node.name.value]! }));
});

describe('router cost directives (schema.subgraph.graphql)', () => {
  it('covers every field of every object type', () => {
    expect(fields.length).toBeGreaterThan(150);
    expect(fields.filter((f) => !f.field).map((f) => `${f.type.name}.${f.node.name.value}`)).toEqual([]);
  });

  it('gives every field @cost(weight:) of the upstream calls its rule declares for one record', () => {
    const disagreeing = fields.flatMap(({ type, node, field }) => {
      const calls = declared(field).calls;
      const expected = calls > 0 ? [`@cost(weight: ${calls})`] : [];
      const actual = named(node.directives, 'cost');
      return JSON.stringify(actual) === JSON.stringify(expected)
        ? []
        : [`${type.name}.${field.name}: declares ${calls} calls, carries ${actual.join(' ') || 'no @cost'}`];
    });
    expect(disagreeing).toEqual([]);
  });

  it('sizes every connection by first/last on its edges, and every other list by the events its items span', () => {
    const disagreeing = fields.flatMap(({ type, node, field }) => {
      const list = isListType(getNullableType(field.type));
      const args = new Set(field.args.map((a) => a.name));
      const target = getNamedType(field.type);
      const connection = isObjectType(target) && 'edges' in target.getFields() && args.has('first') && args.has('last');
      const edgesOfConnection = field.name === 'edges' && 'pageInfo' in type.getFields();
      const events = Math.max(1, declared(field).below?.events ?? 1);
      const expected = connection
        ? [CONNECTION]
        : list && !edgesOfConnection
          ? [`@listSize(assumedSize: ${events})`]
          : [];
      const actual = named(node.directives, 'listSize');
      return JSON.stringify(actual) === JSON.stringify(expected)
        ? []
        : [
            `${type.name}.${field.name}: expected ${expected.join(' ') || 'none'}, carries ${actual.join(' ') || 'none'}`,
          ];
    });
    expect(disagreeing).toEqual([]);
  });

  it('weighs every object type but the roots at 0, so a router counts calls rather than objects', () => {
    const disagreeing = [...printed.values()].flatMap((definition) => {
      const expected = roots.has(definition.name.value) ? [] : ['@cost(weight: 0)'];
      const actual = named(definition.directives, 'cost');
      return JSON.stringify(actual) === JSON.stringify(expected) ? [] : [definition.name.value];
    });
    expect(disagreeing).toEqual([]);
  });

  it('links federation v2.9 with @cost and @listSize', () => {
    const link = sdl.definitions.find((d) => d.kind === Kind.SCHEMA_EXTENSION);
    expect(print(link!)).toContain('@link(url: "https://specs.apollo.dev/federation/v2.9"');
    expect(print(link!)).toMatch(/import: \[.*"@cost", "@listSize"\]/);
  });
});

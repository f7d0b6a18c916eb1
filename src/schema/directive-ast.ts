import {
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  isSpecifiedScalarType,
  Kind,
  parse,
  printType,
  type ConstDirectiveNode,
  type ConstValueNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type TypeDefinitionNode,
} from 'graphql';

/**
 * A directive as Pothos carries it in `extensions.directives` (the list form of
 * @pothos/plugin-directives): graphql-js keeps no applied directives of its own, and federation's
 * printer (`printSubgraphSchema`) reads them from the AST nodes only. This file turns the former
 * into the latter, which is what @pothos/plugin-directives would do.
 */
export interface AppliedDirective {
  name: string;
  args?: Record<string, unknown>;
}

interface WithExtensions {
  extensions?: Readonly<Record<string, unknown>> | null;
}

function appliedDirectives(element: WithExtensions): AppliedDirective[] {
  const list = element.extensions?.directives;
  return Array.isArray(list) ? (list as AppliedDirective[]) : [];
}

function valueNode(value: unknown): ConstValueNode {
  if (Array.isArray(value)) return { kind: Kind.LIST, values: value.map(valueNode) };
  if (typeof value === 'boolean') return { kind: Kind.BOOLEAN, value };
  if (typeof value === 'number') return Number.isInteger(value) ? { kind: Kind.INT, value: String(value) } : { kind: Kind.FLOAT, value: String(value) };
  if (value === null || value === undefined) return { kind: Kind.NULL };
  if (typeof value === 'object') {
    return {
      kind: Kind.OBJECT,
      fields: Object.entries(value).map(([name, v]) => ({ kind: Kind.OBJECT_FIELD, name: { kind: Kind.NAME, value: name }, value: valueNode(v) })),
    };
  }
  return { kind: Kind.STRING, value: String(value) };
}

export function directiveNodes(element: WithExtensions): ConstDirectiveNode[] {
  return appliedDirectives(element).map((d) => ({
    kind: Kind.DIRECTIVE,
    name: { kind: Kind.NAME, value: d.name },
    arguments: Object.entries(d.args ?? {}).map(([name, value]) => ({ kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: name }, value: valueNode(value) })),
  }));
}

/** The members (fields, enum values) of a type whose extensions name directives, by name. */
function memberDirectives(type: GraphQLNamedType): Map<string, ConstDirectiveNode[]> {
  const members: [string, WithExtensions][] =
    isObjectType(type) || isInterfaceType(type) || isInputObjectType(type)
      ? Object.entries(type.getFields())
      : isEnumType(type)
        ? type.getValues().map((v) => [v.name, v])
        : [];
  return new Map(members.map(([name, member]) => [name, directiveNodes(member)]));
}

/** The type's definition as printed, with the directives its extensions name. */
function definitionWithDirectives(type: GraphQLNamedType): TypeDefinitionNode {
  const definition = parse(printType(type)).definitions[0] as TypeDefinitionNode;
  const members = memberDirectives(type);
  const withMembers = <M extends { name: { value: string }; directives?: readonly ConstDirectiveNode[] }>(list: readonly M[] | undefined) =>
    list?.map((m) => ({ ...m, directives: [...(m.directives ?? []), ...(members.get(m.name.value) ?? [])] }));
  const own = [...(definition.directives ?? []), ...directiveNodes(type)];
  if ('fields' in definition) return { ...definition, directives: own, fields: withMembers(definition.fields as never) } as TypeDefinitionNode;
  if ('values' in definition) return { ...definition, directives: own, values: withMembers(definition.values) } as TypeDefinitionNode;
  return { ...definition, directives: own } as TypeDefinitionNode;
}

/**
 * Gives every type that applies a directive (on itself or a member) an AST node carrying it, and
 * the schema an extension node with its own (`@link`). Done in place: the schema is fresh from
 * the builder and nothing has read its AST yet.
 */
export function attachDirectiveAst(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (isIntrospectionType(type) || isSpecifiedScalarType(type)) continue;
    const applies = directiveNodes(type).length > 0 || [...memberDirectives(type).values()].some((d) => d.length > 0);
    if (applies) (type as { astNode?: unknown }).astNode = definitionWithDirectives(type);
  }
  const own = directiveNodes(schema);
  if (own.length > 0) (schema as { extensionASTNodes: unknown }).extensionASTNodes = [{ kind: Kind.SCHEMA_EXTENSION, directives: own, operationTypes: [] }];
  return schema;
}

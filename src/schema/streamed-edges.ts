import { type FieldNode, type GraphQLResolveInfo, Kind } from 'graphql';
import { flattenFields } from './selection.ts';

/**
 * Whether a connection's `edges` are selected with `@stream` (its `if` not false): the resolver then
 * hands them over page by page as an async iterable, and a larger window is allowed (paging.ts).
 * Every occurrence of `edges` must stream: one that does not would wait for the whole list anyway.
 */
export function streamsEdges(info: GraphQLResolveInfo): boolean {
  const edges = info.fieldNodes
    .flatMap((field) => flattenFields(field.selectionSet, info.fragments))
    .filter((field) => field.name.value === 'edges');
  return edges.length > 0 && edges.every((field) => isStreamed(field, info.variableValues));
}

/** The `@stream` of one field node, its `if` (default true) read from the document or the variables. */
export function isStreamed(field: FieldNode, variables: Readonly<Record<string, unknown>> = {}): boolean {
  const stream = field.directives?.find((directive) => directive.name.value === 'stream');
  if (!stream) return false;
  const condition = stream.arguments?.find((argument) => argument.name.value === 'if')?.value;
  if (condition?.kind === Kind.BOOLEAN) return condition.value;
  if (condition?.kind === Kind.VARIABLE) return variables[condition.name.value] !== false;
  return true;
}

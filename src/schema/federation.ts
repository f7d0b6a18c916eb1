import type { GraphQLResolveInfo } from 'graphql';
import type { GatewayContext } from '../resolvers/context.ts';
import type { AppliedDirective } from './directive-ast.ts';

/**
 * Federation v2 annotations for the schema's types and fields, as Pothos `extensions`: the
 * directives federation's printer shows in `_service { sdl }` (directive-ast.ts), and for an
 * entity the `resolveReference` that @apollo/subgraph's `_entities` calls.
 */

/** The federation directives this subgraph uses, imported by its `@link`. */
export const FEDERATION_LINK = { url: 'https://specs.apollo.dev/federation/v2.3', import: ['@key', '@shareable', '@inaccessible', '@tag'] };

/** A value type other subgraphs may define too (Money, PageInfo): any of them may resolve it. */
export const shareable = { directives: [{ name: 'shareable' }] satisfies AppliedDirective[] };

/**
 * What the README recommends to keep out of a public company graph (`raw`: the service's record
 * as sent, whose content changes with the detail flags): tagged `internal` for contracts that
 * filter by tag, and inaccessible in the composed API.
 */
export const internalOnly = { directives: [{ name: 'inaccessible' }, { name: 'tag', args: { name: 'internal' } }] satisfies AppliedDirective[] };

/**
 * Relay's `node`/`nodes`: every subgraph that implements Node serves its own, and no one of them can
 * resolve another's ids, so they are shareable (composition accepts several) and inaccessible (the
 * composed API has none). A client of this gateway alone still has them.
 */
export const localToSubgraph = { directives: [{ name: 'shareable' }, { name: 'inaccessible' }] satisfies AppliedDirective[] };

/**
 * An entity: `@key(fields: …)` and how a reference (the key fields, as another subgraph sends
 * them) becomes a record, through the request's loaders.
 */
export function entity<Ref>(
  fields: string,
  resolveReference: (reference: Ref, ctx: GatewayContext, info: GraphQLResolveInfo) => unknown,
): { directives: AppliedDirective[]; apollo: { subgraph: { resolveReference: typeof resolveReference } } } {
  return { directives: [{ name: 'key', args: { fields } }], apollo: { subgraph: { resolveReference } } };
}

import SchemaBuilder from '@pothos/core';
import DirectivesPlugin from '@pothos/plugin-directives';
import FederationPlugin from '@pothos/plugin-federation';
import RelayPlugin, { resolveNodes } from '@pothos/plugin-relay';
import { decodeLicenseeGlobalId, encodeLicenseeGlobalId } from '../ids/global-id.ts';
import type { GatewayContext } from '../resolvers/context.ts';
import { costs, costsNothing, nodeById, nodesByIds } from './cost.ts';
import { localToSubgraph } from './federation.ts';
import { namesNode } from './node-id.ts';
import { needs } from './scopes.ts';

/** The one SchemaBuilder: plugins and scalar types only; the types live in the domain files. */
export const builder = new SchemaBuilder<{
  Context: GatewayContext;
  Scalars: {
    DateTime: { Input: string; Output: string };
    Date: { Input: string; Output: string };
    JSON: { Input: unknown; Output: unknown };
  };
  Connection: { totalCount: PromiseLike<number> | number };
  DefaultEdgesNullability: { list: false; items: false };
  DefaultNodeNullability: false;
  DefaultFieldNullability: false;
}>({
  // Federation last, after every plugin that wraps resolvers.
  plugins: [RelayPlugin, DirectivesPlugin, FederationPlugin],
  // Fields are non-null unless they say otherwise: the contract's nullability is spelled out per field.
  defaultFieldNullability: false,
  relay: {
    // Ids carry the licensee they were made for (ids/global-id.ts). Another licensee's ids, malformed
    // ids, unknown types and impossible numbers are null (each type's `parse` refuses the latter),
    // all decided before the first upstream call.
    encodeGlobalID: (typename, id, ctx) => encodeLicenseeGlobalId(typename, id, ctx.account.systemIdentifier),
    decodeGlobalID: (globalID, ctx) => decodeLicenseeGlobalId(globalID, ctx.account.systemIdentifier),
    nodeQueryOptions: {
      description:
        'Fetches any object with a global id (an Event, Hotel, Reservation, GroupCode, ' +
        'EventQuestion, CustomField or Attendee); null when it does not exist or the id was made for ' +
        'another licensee.',
      args: { id: { description: 'A global id from an `id` field.' } },
      ...localToSubgraph,
      ...costs(nodeById),
      ...needs('read'),
      resolve: (_root, args, _ctx, info, resolveNode) => (namesNode(info, args.id) ? resolveNode(args.id) : null),
    },
    nodesQueryOptions: {
      description:
        'Fetches several objects by their global ids, in the same order; null for ids that do not ' +
        'exist or were made for another licensee.',
      args: { ids: { description: 'Global ids from `id` fields.' } },
      ...localToSubgraph,
      ...costs(nodesByIds),
      ...needs('read'),
      // The plugin's own callback would load every id, unknown types included (and throw on them).
      resolve: (_root, args, ctx, info): Promise<unknown[]> =>
        resolveNodes(
          builder,
          ctx,
          info,
          args.ids.map((id) => (namesNode(info, id) ? id : null)),
        ),
    },
    nodeTypeOptions: { description: 'An object with a global id (Relay global object identification).' },
    idFieldOptions: { description: 'Global id of the object, for `node` and `nodes`.', ...costsNothing },
    pageInfoTypeOptions: { description: 'Where a page of a connection lies in the whole list.', shareable: true },
    // A connection's own fields read the window that the connection field's rule counts (cost.ts).
    hasNextPageFieldOptions: { description: 'Whether records follow this page.', ...costsNothing },
    hasPreviousPageFieldOptions: { description: 'Whether records precede this page.', ...costsNothing },
    startCursorFieldOptions: { description: 'Cursor of the first record of the page.', ...costsNothing },
    endCursorFieldOptions: { description: 'Cursor of the last record of the page.', ...costsNothing },
    cursorFieldOptions: {
      description: 'Opaque position of this record in the list; pass it as `after` or `before`.',
      ...costsNothing,
    },
    nodeFieldOptions: { nullable: false, description: 'The record.', ...costsNothing },
    edgesFieldOptions: {
      nullable: { list: false, items: false },
      description: 'The records of this page with their cursors.',
      ...costsNothing,
    },
    pageInfoFieldOptions: { description: 'Where this page lies in the whole list.', ...costsNothing },
    firstArgOptions: {
      description:
        'Number of records from the start of the window (default 100 when neither first nor last is ' +
        'given, at most 5000).',
    },
    lastArgOptions: { description: 'Number of records from the end of the window (at most 5000).' },
    afterArgOptions: { description: 'Only records after this cursor.' },
    beforeArgOptions: { description: 'Only records before this cursor.' },
  },
});

builder.globalConnectionField('totalCount', (t) =>
  t.int({
    nullable: false,
    description:
      'Number of records in the whole list under this filter (costs one page-count call and the last ' +
      'page; asked only when selected).',
    // Counted by the connection field's rule, which sees whether totalCount is selected.
    ...costsNothing,
    // A lazy thenable: the page count is asked only when this field is resolved.
    resolve: (parent) => parent.totalCount as Promise<number> | number,
  }),
);

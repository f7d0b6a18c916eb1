import { defaultFieldResolver, type GraphQLSchema, isObjectType } from 'graphql';
import { builder } from './builder.ts';
import { federationLink } from './federation.ts';
import { toSubgraphSchema } from './subgraph.ts';
import './scalars.ts';
import './enums.ts';
import './event.ts';
import './group-code.ts';
import './room-pickup.ts';
import './shopping-view.ts';
import './hotel.ts';
import './reservation.ts';
import './reservation-change.ts';
import './attendee.ts';
import './question.ts';
import './custom-field.ts';
import './pickup.ts';
import './webhook.ts';

builder.queryType({ description: 'Reads of the reservation service, for one licensee.' });
builder.mutationType({ description: 'Writes to the reservation service, checked before anything is sent.' });
builder.subscriptionType({
  description: 'Changes of the reservation service, pushed over SSE or graphql-ws at /graphql.',
});

/** The schema `/graphql` serves: a Federation v2 subgraph, and `subgraphSdl()` what `_service { sdl }` answers. */
export const { schema, sdl: subgraphSdl } = toSubgraphSchema(
  // @pothos/plugin-directives turns `extensions.directives` into the AST federation's printer reads.
  resolveLazyConnectionFields(builder.toSchema({ sortSchema: false, extensions: { directives: [federationLink] } })),
);

/**
 * Connections, edges and page info hold their costly values as promises that start only when read
 * (paging.ts, `lazy`): `totalCount`, `hasNextPage`, a window's last cursor. graphql-js awaits a
 * property that is a promise; graphql-jit reads a field without a resolver as a plain value. Those
 * fields get the default resolver explicitly, so both executors await them.
 */
function resolveLazyConnectionFields(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || !/(Connection|Edge|PageInfo)$/.test(type.name)) continue;
    for (const field of Object.values(type.getFields())) field.resolve ??= defaultFieldResolver;
  }
  return schema;
}

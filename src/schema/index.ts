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

builder.queryType({ description: 'Reads of the reservation service, for one licensee.' });
builder.mutationType({ description: 'Writes to the reservation service, checked before anything is sent.' });
builder.subscriptionType({ description: 'Changes of the reservation service, pushed over SSE or graphql-ws at /graphql.' });

/** The schema `/graphql` serves: a Federation v2 subgraph, and `sdl` what `_service { sdl }` answers. */
export const { schema, sdl: subgraphSdl } = toSubgraphSchema(
  // @pothos/plugin-directives turns `extensions.directives` into the AST federation's printer reads.
  builder.toSchema({ sortSchema: false, extensions: { directives: [federationLink] } }),
);

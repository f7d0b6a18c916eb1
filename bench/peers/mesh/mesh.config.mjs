// GraphQL Mesh over the REST service, composed from the OpenAPI description in docs/ as a Mesh user
// would: `npm run compose` writes supergraph.graphql, Hive Gateway serves it (gateway.config.mjs).
import { defineConfig } from '@graphql-mesh/compose-cli';
import { MapperKind, mapSchema, pruneSchema } from '@graphql-tools/utils';
import { loadOpenAPISubgraph } from '@omnigraph/openapi';

/** Everything but the writes: read with queries, as a GraphQL client expects. */
const READS = [
  'getevent',
  'getgroupcodes',
  'gethotels',
  'getpickup',
  'getshoppingviewhotels',
  'getreservation',
  'getreservationpagecount',
  'geteventquestions',
  'getattendeeanswers',
  'getattendeeanswerspagecount',
  'getcustomfields',
];

/** The three mailing-list endpoints only answer 410: not worth a field. */
const withoutRemovedEndpoints = (schema) =>
  pruneSchema(
    mapSchema(schema, {
      [MapperKind.ROOT_FIELD]: (config, fieldName) => (fieldName.includes('mailinglist') ? null : config),
    }),
  );
const withoutTokenInputs = (schema) =>
  mapSchema(schema, {
    [MapperKind.INPUT_OBJECT_FIELD]: (config, fieldName) => (fieldName === 'token' ? null : config),
  });

export const composeConfig = defineConfig({
  subgraphs: [
    {
      sourceHandler: loadOpenAPISubgraph('Reservations', {
        source: '../../../docs/upstream.openapi.yaml',
        // Read at run time, so one composed supergraph serves any emulator.
        endpoint: '{env.UPSTREAM_BASE_URL}/api/v102',
        operationHeaders: { 'user-agent': 'mesh-peer/1' },
        // The client's service token (header X-Service-Token) becomes the `token` parameter of every
        // call; the service reads parameters from the query string as well as from the form body.
        queryParams: { token: "{context.headers['x-service-token']}" },
        selectQueryOrMutationField: READS.map((fieldName) => ({ type: 'Query', fieldName })),
      }),
      // The token comes from the header, so clients no longer pass it in every input. (Mesh's filter
      // transform only hides a field, which composition refuses for a required one: drop it.)
      transforms: [withoutRemovedEndpoints, withoutTokenInputs],
    },
  ],
  // A group code names its hotel by id: a field that looks the hotel up, one call per group code
  // (the service's records carry no event id, so the client passes it again).
  additionalTypeDefs: /* GraphQL */ `
    extend type GroupCode {
      hotels(eventId: Int!): [gethotels_response]
        @resolveTo(
          sourceName: "Reservations"
          sourceTypeName: "Query"
          sourceFieldName: "gethotels"
          requiredSelectionSet: "{ hotelId }"
          sourceArgs: { input: { eventId: "{args.eventId}", hotelId: "{root.hotelId}" } }
        )
    }
  `,
});

import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { REGISTRATION_SDL } from '../../../examples/federation/registration-subgraph.ts';
import { RESERVATIONS_SUBGRAPH } from '../../../examples/federation/subgraph-names.ts';
import { subgraphSdl } from '../../../src/schema/index.ts';

/** The two subgraphs of the tests, as a composer takes them. */
export function subgraphs(
  urls: { reservations: string; registrations: string } = {
    reservations: 'http://127.0.0.1/graphql',
    registrations: 'http://127.0.0.1/graphql',
  },
) {
  return [
    { name: RESERVATIONS_SUBGRAPH, url: urls.reservations, typeDefs: parse(subgraphSdl()) },
    { name: 'registrations', url: urls.registrations, typeDefs: parse(REGISTRATION_SDL) },
  ];
}

/** The supergraph of both, composed by @apollo/composition; throws with the composer's errors. */
export function composeSupergraph(urls: Parameters<typeof subgraphs>[0]): string {
  const result = composeServices(subgraphs(urls));
  if (result.errors) throw new Error(result.errors.map((e) => e.message).join('\n'));
  return result.supergraphSdl;
}

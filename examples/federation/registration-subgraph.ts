import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { createYoga } from 'graphql-yoga';

/**
 * A small registration service of the company graph, as another team would write it with
 * @apollo/subgraph and graphql-yoga: it owns Registration, extends our Attendee with its
 * registrations, points at our Event by key, and implements Node with its own `node` field (kept
 * out of the composed API like ours: no subgraph can resolve another's ids).
 */
export const REGISTRATION_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key", "@shareable", "@inaccessible"])

  interface Node {
    id: ID!
  }

  type Registration implements Node @key(fields: "id") {
    id: ID!
    attendee: Attendee!
    event: Event!
  }

  type Attendee @key(fields: "attendeeId registrationEventId") {
    attendeeId: String!
    registrationEventId: String!
    registrations: [Registration!]!
  }

  type Event @key(fields: "eventId", resolvable: false) {
    eventId: Int!
  }

  type Query {
    registrations: [Registration!]!
    registration(id: ID!): Registration
    node(id: ID!): Node @shareable @inaccessible
    nodes(ids: [ID!]!): [Node]! @shareable @inaccessible
  }
`;

export interface RegistrationRecord {
  id: string;
  attendeeId: string;
  registrationEventId: string;
  /** The reservation service's event the attendee registered for. */
  eventId: number;
}

export interface RegistrationSubgraph {
  url: string;
  /** The Authorization header of each request it received, in order (null when none was sent). */
  authorizations: (string | null)[];
  close(): Promise<void>;
}

export async function startRegistrationSubgraph(records: RegistrationRecord[]): Promise<RegistrationSubgraph> {
  const byId = (id: unknown) => records.find((r) => r.id === id) ?? null;
  const schema = buildSubgraphSchema({
    typeDefs: parse(REGISTRATION_SDL),
    resolvers: {
      Query: {
        registrations: () => records,
        registration: (_: unknown, args: { id: string }) => byId(args.id),
        node: (_: unknown, args: { id: string }) => byId(args.id),
        nodes: (_: unknown, args: { ids: string[] }) => args.ids.map(byId),
      },
      Node: { __resolveType: () => 'Registration' },
      Registration: {
        __resolveReference: (ref: { id: string }) => byId(ref.id),
        attendee: (r: RegistrationRecord) => ({ attendeeId: r.attendeeId, registrationEventId: r.registrationEventId }),
        event: (r: RegistrationRecord) => ({ eventId: r.eventId }),
      },
      Attendee: {
        __resolveReference: (ref: { attendeeId: string; registrationEventId: string }) => ref,
        registrations: (a: { attendeeId: string; registrationEventId: string }) =>
          records.filter((r) => r.attendeeId === a.attendeeId && r.registrationEventId === a.registrationEventId),
      },
    } as never,
  });
  const authorizations: (string | null)[] = [];
  const yoga = createYoga({
    schema,
    logging: false,
    plugins: [
      {
        onRequest: ({ request }: { request: Request }) =>
          void authorizations.push(request.headers.get('authorization')),
      },
    ],
  });
  const server: Server = createServer(yoga);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

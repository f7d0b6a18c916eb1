import '../../../examples/federation/quiet-apollo.ts';
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { getOperationAST, parse, validate } from 'graphql';
import { RESERVATIONS_SUBGRAPH } from '../../../examples/federation/subgraph-names.ts';
import { withoutScopes } from '../../../examples/federation/without-scopes.ts';

/** What the data sources see of the client's request: its Authorization header, forwarded to our subgraph only. */
interface ClientContext {
  authorization?: string;
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

async function body(
  req: IncomingMessage,
): Promise<{ query: string; variables?: Record<string, unknown>; operationName?: string }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/**
 * @apollo/gateway serving a supergraph over HTTP on 127.0.0.1 (Apollo Server is not a dependency:
 * this is the little of it the gateway needs, parse, validate and the gateway's executor).
 */
export async function startApolloGateway(supergraphSdl: string): Promise<{ url: string; close(): Promise<void> }> {
  const gateway = new ApolloGateway({
    // It refuses a supergraph with @requiresScopes, which it cannot enforce; our subgraph checks them.
    supergraphSdl: withoutScopes(supergraphSdl),
    logger: quiet,
    buildService: ({ name, url }) =>
      new RemoteGraphQLDataSource<ClientContext>({
        url,
        willSendRequest({ request, context }) {
          // The client's credential is for this gateway: other teams' subgraphs are not sent it.
          if (name === RESERVATIONS_SUBGRAPH && context.authorization)
            request.http?.headers.set('authorization', context.authorization);
        },
      }),
  });
  const { schema, executor } = await gateway.load();
  const server: Server = createServer(async (req, res) => {
    const { query, variables, operationName } = await body(req);
    const document = parse(query);
    const errors = validate(schema, document);
    const result = errors.length
      ? { errors }
      : await executor({
          request: { query, variables, operationName },
          document,
          source: query,
          queryHash: createHash('sha256').update(query).digest('hex'),
          operationName: operationName ?? null,
          operation: getOperationAST(document, operationName)!,
          schema,
          context: { authorization: req.headers.authorization },
          metrics: {},
          logger: quiet,
          cache: undefined,
          overallCachePolicy: undefined,
        } as never);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(result));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await gateway.stop();
    },
  };
}

// The ceiling of the side-by-side benchmark: a Yoga server with a schema of one constant and no
// resolvers, so `{ __typename }` measures only Yoga, graphql-js and the socket on this machine.
import { createServer } from 'node:http';
import { createSchema, createYoga } from 'graphql-yoga';

const yoga = createYoga({
  schema: createSchema({ typeDefs: 'type Query { ok: Boolean }' }),
  graphiql: false,
  logging: false,
});

const server = createServer(yoga);
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const { port } = server.address();
  console.log(`ceiling ready at http://127.0.0.1:${port}/graphql`);
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.close(() => process.exit(0)));

// Hive Gateway serving the composed supergraph: defaults, as a Mesh user starts it. Nothing but the
// emulator on 127.0.0.1 may be contacted, so telemetry and usage reporting stay off.
import { defineConfig } from '@graphql-hive/gateway';

export const gatewayConfig = defineConfig({
  supergraph: './supergraph.graphql',
  graphiql: false,
  // One process, so that its RSS is what the benchmark samples.
  fork: 1,
  logging: 'warn',
});

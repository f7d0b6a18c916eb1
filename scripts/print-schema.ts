import { writeFileSync } from 'node:fs';
import { printSchemaFile, printSubgraphSchemaFile } from '../src/schema/print.ts';

/**
 * `npm run codegen` step one: writes schema.graphql (the API) and schema.subgraph.graphql (the
 * federation SDL) from the Pothos schema.
 */
writeFileSync(new URL('../schema.graphql', import.meta.url), printSchemaFile());
writeFileSync(new URL('../schema.subgraph.graphql', import.meta.url), printSubgraphSchemaFile());
console.log('wrote schema.graphql and schema.subgraph.graphql');

import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * GraphQL Code Generator's client preset over the gateway's schema: typed documents for the
 * `graphql()` calls under src/codegen, and persisted-documents.json, the manifest a gateway with
 * TRUSTED_DOCUMENTS_FILE runs them from (docs/clients.md, "Trusted documents").
 *
 *   npx graphql-codegen --config codegen.ts
 */
const config: CodegenConfig = {
  // A team points this at its gateway's /graphql (introspection) or at a copy of schema.graphql.
  schema: process.env.GATEWAY_SCHEMA ?? '../../schema.graphql',
  documents: ['src/codegen/**/*.ts', '!src/codegen/gql/**'],
  ignoreNoDocuments: false,
  generates: {
    './src/codegen/gql/': {
      preset: 'client',
      presetConfig: {
        // sha256 of each document's text, the ids TRUSTED_DOCUMENTS_FILE is keyed by.
        persistedDocuments: { hashAlgorithm: 'sha256' },
        fragmentMasking: false,
      },
      config: {
        // Every custom scalar mapped (strictScalars refuses one that is not), so no field is `any`.
        strictScalars: true,
        scalars: {
          DateTime: 'string',
          Date: 'string',
          JSON: '../../json#JsonValue',
          // Federation's entity reference: only a router sends it.
          _Any: '{ [key: string]: unknown }',
        },
        // A document is a string with its id (`__meta__.hash`): a fetch sends the id, never the text.
        documentMode: 'string',
        enumsAsTypes: true,
        useTypeImports: true,
      },
    },
  },
};

export default config;

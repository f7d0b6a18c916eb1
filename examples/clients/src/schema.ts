import { readFileSync } from 'node:fs';
import { buildSchema, introspectionFromSchema, isAbstractType } from 'graphql';

/**
 * The gateway's schema (schema.graphql at the repository's root, or GATEWAY_SCHEMA), for what the
 * caches need to know of it. A browser bundle would generate these at build time instead (codegen's
 * `fragment-matcher` and `introspection` plugins).
 */
const schema = buildSchema(
  readFileSync(process.env.GATEWAY_SCHEMA ?? new URL('../../../schema.graphql', import.meta.url), 'utf8'),
);

/** Every interface and union with the types that implement it (Apollo's `possibleTypes`). */
export const possibleTypes: Record<string, string[]> = Object.fromEntries(
  Object.values(schema.getTypeMap())
    .filter(isAbstractType)
    .map((type) => [type.name, schema.getPossibleTypes(type).map((member) => member.name)]),
);

/** The types `node(id:)` can answer with. */
export const nodeTypes: string[] = possibleTypes.Node ?? [];

/** The schema as introspection (graphcache's `schema`: it then knows interfaces and nullability). */
export const introspection = introspectionFromSchema(schema);

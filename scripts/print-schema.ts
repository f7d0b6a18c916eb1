import { writeFileSync } from 'node:fs';
import { printSchemaFile } from '../src/schema/print.ts';

/** `npm run codegen` step one: writes schema.graphql from the Pothos schema. */
writeFileSync(new URL('../schema.graphql', import.meta.url), printSchemaFile());
console.log('wrote schema.graphql');

import { readFileSync } from 'node:fs';
import {
  astFromValue,
  buildSchema,
  type GraphQLInputType,
  type GraphQLNamedType,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  isScalarType,
  isSpecifiedScalarType,
  print,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.ts';
import { printSchemaFile } from '../../src/schema/print.ts';

/**
 * The public contract clients rely on, kept inside the repository so a clone alone can test it.
 * `.ci/run` checks that the copy is the team's contract where that sits beside the clone.
 */
const contract = buildSchema(readFileSync(new URL('../contract/graphql-contract.graphql', import.meta.url), 'utf8'));
// A later issue builds the subscription and the types only it uses.
const LATER = new Set(['Subscription', 'ReservationChange', 'ReservationChangeKind', 'ReservationChangeFilter']);

/** A default value as it is written in SDL (enum defaults are internal values in a built schema). */
const literal = (value: unknown, type: GraphQLInputType) => {
  const ast = astFromValue(value, type);
  return ast ? print(ast) : 'null';
};

const ownTypes = (s: typeof schema) =>
  Object.values(s.getTypeMap()).filter((t) => !isIntrospectionType(t) && !isSpecifiedScalarType(t));

describe('schema.graphql', () => {
  it('is what npm run codegen prints from src/schema', () => {
    const committed = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
    expect(committed, 'schema.graphql is stale: run npm run codegen and commit it').toBe(printSchemaFile());
  });
});

describe('the public contract', () => {
  it('holds every type, field, argument, enum value and input field with the contract’s names and nullability', () => {
    const missing: string[] = [];
    for (const want of ownTypes(contract)) {
      if (LATER.has(want.name)) continue;
      const have = schema.getType(want.name) as GraphQLNamedType | undefined;
      if (!have) {
        missing.push(`type ${want.name}`);
        continue;
      }
      if (have.constructor !== want.constructor)
        missing.push(`${want.name} is a ${have.constructor.name}, not a ${want.constructor.name}`);
      if ((isObjectType(want) || isInterfaceType(want)) && (isObjectType(have) || isInterfaceType(have))) {
        for (const i of want.getInterfaces())
          if (!have.getInterfaces().some((x) => x.name === i.name)) missing.push(`${want.name} implements ${i.name}`);
        const fields = have.getFields();
        for (const field of Object.values(want.getFields())) {
          const mine = fields[field.name];
          if (!mine) {
            missing.push(`${want.name}.${field.name}`);
            continue;
          }
          if (String(mine.type) !== String(field.type))
            missing.push(`${want.name}.${field.name}: ${mine.type} instead of ${field.type}`);
          for (const arg of field.args) {
            const a = mine.args.find((x) => x.name === arg.name);
            if (!a) missing.push(`${want.name}.${field.name}(${arg.name})`);
            else if (String(a.type) !== String(arg.type))
              missing.push(`${want.name}.${field.name}(${arg.name}): ${a.type} instead of ${arg.type}`);
            else if (
              arg.defaultValue !== undefined &&
              literal(a.defaultValue, a.type) !== literal(arg.defaultValue, arg.type)
            ) {
              missing.push(
                `${want.name}.${field.name}(${arg.name}) default ${literal(a.defaultValue, a.type)} instead of ${literal(arg.defaultValue, arg.type)}`,
              );
            }
          }
          for (const a of mine.args)
            if (!field.args.some((x) => x.name === a.name) && String(a.type).endsWith('!'))
              missing.push(`${want.name}.${field.name}(${a.name}) is required but not in the contract`);
        }
      }
      if (isInputObjectType(want) && isInputObjectType(have)) {
        const fields = have.getFields();
        for (const field of Object.values(want.getFields())) {
          const mine = fields[field.name];
          if (!mine) missing.push(`${want.name}.${field.name}`);
          else if (String(mine.type) !== String(field.type))
            missing.push(`${want.name}.${field.name}: ${mine.type} instead of ${field.type}`);
        }
        for (const mine of Object.values(fields))
          if (!want.getFields()[mine.name] && String(mine.type).endsWith('!'))
            missing.push(`${want.name}.${mine.name} is required but not in the contract`);
      }
      if (isEnumType(want) && isEnumType(have)) {
        expect(have.getValues().map((v) => v.name)).toEqual(want.getValues().map((v) => v.name));
      }
    }
    expect(missing).toEqual([]);
  });

  it('describes every type, field, argument, enum value and input field', () => {
    const undescribed: string[] = [];
    for (const type of ownTypes(schema)) {
      if (!type.description) undescribed.push(type.name);
      if (isObjectType(type) || isInterfaceType(type)) {
        for (const field of Object.values(type.getFields())) {
          if (!field.description) undescribed.push(`${type.name}.${field.name}`);
          for (const arg of field.args)
            if (!arg.description) undescribed.push(`${type.name}.${field.name}(${arg.name})`);
        }
      }
      if (isInputObjectType(type))
        for (const field of Object.values(type.getFields()))
          if (!field.description) undescribed.push(`${type.name}.${field.name}`);
      if (isEnumType(type))
        for (const value of type.getValues()) if (!value.description) undescribed.push(`${type.name}.${value.name}`);
      if (isScalarType(type) && !type.description) undescribed.push(type.name);
    }
    expect(undescribed).toEqual([]);
  });
});

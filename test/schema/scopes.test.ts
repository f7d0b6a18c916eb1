import SchemaBuilder from '@pothos/core';
import DirectivesPlugin from '@pothos/plugin-directives';
import { buildSchema, type GraphQLObjectType, Kind, parse, print, valueFromASTUntyped, visit } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema, subgraphSdl } from '../../src/schema/index.ts';
import {
  fieldsScopedBelowRoot,
  needs,
  needsACredential,
  requirementOf,
  rootFieldsWithoutScope,
} from '../../src/schema/scopes.ts';

// The scope checks read each root field's own declaration: a root field that declares none would be
// open to every client, whatever its scopes, here and at a company router alike.
describe('declared scopes', () => {
  it('every root field of the gateway declares the scope it needs (or @authenticated), and nothing below the roots does', () => {
    expect(rootFieldsWithoutScope(schema)).toEqual([]);
    expect(fieldsScopedBelowRoot(schema)).toEqual([]);
  });

  it('names each root field of a schema that declares none, and each field below the roots that declares one', () => {
    const scratch = buildSchema(`
      type Query { open: Thing, read: Thing @requiresScopes(scopes: [["read"]]) }
      type Mutation { write: Int @requiresScopes(scopes: [["write"]]), forgotten: Int }
      type Subscription { any: Int @authenticated }
      type Thing { a: Int, b: Int @requiresScopes(scopes: [["read"]]) }
      directive @requiresScopes(scopes: [[String!]!]!) on FIELD_DEFINITION
      directive @authenticated on FIELD_DEFINITION
    `);
    expect(rootFieldsWithoutScope(scratch)).toEqual(['Query.open', 'Mutation.forgotten']);
    expect(fieldsScopedBelowRoot(scratch)).toEqual(['Thing.b']);
  });

  it('reads what Pothos field options declare', () => {
    const builder = new SchemaBuilder<{ Directives: Record<string, { locations: 'FIELD_DEFINITION' }> }>({
      plugins: [DirectivesPlugin],
    });
    builder.queryType({
      fields: (t) => ({
        reads: t.int({ ...needs('read'), resolve: () => 1 }),
        anyone: t.int({ ...needsACredential, resolve: () => 1 }),
        forgotten: t.int({ resolve: () => 1 }),
      }),
    });
    const fields = builder.toSchema().getQueryType()!.getFields();
    expect(requirementOf(fields.reads!)).toEqual({ scopes: [['read']] });
    expect(requirementOf(fields.anyone!)).toBe('authenticated');
    expect(requirementOf(fields.forgotten!)).toBeUndefined();
  });

  it('gives the webhook management fields webhooks:manage, mutations write, and the other roots read', () => {
    const scopeOf = (type: GraphQLObjectType | null | undefined) =>
      Object.fromEntries(Object.values(type?.getFields() ?? {}).map((field) => [field.name, requirementOf(field)]));
    const query = scopeOf(schema.getQueryType());
    const mutation = scopeOf(schema.getMutationType());
    expect(query._service).toBe('authenticated');
    for (const [name, requirement] of [...Object.entries(query), ...Object.entries(mutation)]) {
      if (name === '_service') continue;
      const expected = /webhook/i.test(name) ? 'webhooks:manage' : name in mutation ? 'write' : 'read';
      expect(requirement, name).toEqual({ scopes: [[expected]] });
    }
    expect(scopeOf(schema.getSubscriptionType())).toEqual({ reservationChanged: { scopes: [['read']] } });
  });

  it('prints each root field’s declaration in the subgraph SDL as federation’s @requiresScopes, which the @link imports, and no other', () => {
    const sdl = parse(subgraphSdl());
    const printed = new Map<string, unknown>();
    visit(sdl, {
      FieldDefinition(field, _key, _parent, _path, ancestors) {
        const type = ancestors.at(-1) as { name?: { value: string } };
        for (const directive of field.directives ?? [])
          if (directive.name.value === 'requiresScopes' || directive.name.value === 'authenticated')
            printed.set(
              `${type.name?.value}.${field.name.value}`,
              valueFromASTUntyped(directive.arguments?.[0]?.value ?? { kind: Kind.NULL }),
            );
      },
    });
    const declared = new Map<string, unknown>();
    const roots = [schema.getQueryType()!, schema.getMutationType()!, schema.getSubscriptionType()!];
    for (const type of roots)
      for (const field of Object.values(type.getFields()))
        if (!field.name.startsWith('_'))
          // (federation's own _entities and _service are not in the SDL a composer reads)
          declared.set(`${type.name}.${field.name}`, (requirementOf(field) as { scopes: string[][] }).scopes);
    expect(printed).toEqual(declared);
    expect(printed.get('Query.webhookEndpoints')).toEqual([['webhooks:manage']]);
    expect(print(sdl)).toMatch(
      /@link\(url: "https:\/\/specs\.apollo\.dev\/federation\/v2\.\d+", import: \[[^\]]*"@requiresScopes"/,
    );
  });
});

import { type ConstDirectiveNode, Kind, parse, print, visit } from 'graphql';

/** The `@link` of the requiresScopes spec, which composition writes `for: SECURITY`. */
const linksScopes = (directive: ConstDirectiveNode) =>
  directive.name.value === 'link' &&
  directive.arguments?.some(
    (arg) =>
      arg.name.value === 'url' &&
      arg.value.kind === Kind.STRING &&
      arg.value.value.startsWith('https://specs.apollo.dev/requiresScopes/'),
  );

/**
 * A supergraph without its `@requiresScopes`, for a router that cannot enforce them: Apollo Gateway
 * (@apollo/gateway) refuses any supergraph linking a SECURITY feature it does not support, as
 * requiresScopes is. Nothing is let through that would be refused: our gateway checks each field's
 * scope itself (src/auth/scopes.ts); the refusal comes from it rather than from the router.
 */
export function withoutScopes(supergraphSdl: string): string {
  return print(
    visit(parse(supergraphSdl), {
      Directive: (directive) =>
        directive.name.value === 'requiresScopes' || linksScopes(directive as ConstDirectiveNode) ? null : undefined,
      DirectiveDefinition: (definition) => (definition.name.value === 'requiresScopes' ? null : undefined),
      ScalarTypeDefinition: (scalar) => (scalar.name.value === 'requiresScopes__Scope' ? null : undefined),
    }),
  );
}

/**
 * The federation annotations several types share, as @pothos/plugin-federation's
 * options. Keys and `resolveReference`s sit next to their types (`builder.asEntity`).
 */

/**
 * The schema's `@link` to federation v2 and the directives the types use (what
 * `toSubGraphSchema` would write; subgraph.ts says why we do not call it). v2.9 for `@cost` and
 * `@listSize`, which router-cost.ts adds from each field's declared cost, and `@requiresScopes`
 * (v2.5), which each root field declares (scopes.ts).
 */
export const federationLink = {
  name: 'link',
  args: {
    url: 'https://specs.apollo.dev/federation/v2.9',
    import: ['@key', '@shareable', '@inaccessible', '@tag', '@requiresScopes', '@cost', '@listSize'],
  },
};

/**
 * What docs/federating.md recommends to keep out of a public company graph (`raw`: the service's record
 * as sent, whose content changes with the detail flags): tagged `internal` for contracts that
 * filter by tag, and inaccessible in the composed API.
 */
export const internalOnly = { inaccessible: true, tag: 'internal' } as const;

/**
 * Relay's `node`/`nodes`: every subgraph that implements Node serves its own, and no one of them can
 * resolve another's ids, so they are shareable (composition accepts several) and inaccessible (the
 * composed API has none). A client of this gateway alone still has them.
 */
export const localToSubgraph = { shareable: true, inaccessible: true } as const;

type Flat<T> = { [K in keyof T]: T[K] };

/**
 * `true` only when a GraphQL input's shape (its ref's `$inferInput`) is exactly the shape the
 * resolvers take (resolvers/filters.ts, derived from the endpoint table), so that a field added,
 * dropped, renamed or retyped on one side only fails the typecheck:
 * `true satisfies SameShape<typeof HotelFilter.$inferInput, HotelFilterShape>`.
 */
export type SameShape<A, B> =
  (<T>() => T extends Flat<A> ? 1 : 2) extends <T>() => T extends Flat<B> ? 1 : 2 ? true : false;

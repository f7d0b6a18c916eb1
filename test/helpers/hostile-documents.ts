/**
 * Hostile documents: each must be refused before any upstream call and
 * fast (the limits' tests check the refusal; `npm run bench -- hostile` measures how fast). Every
 * one of them took the gateway down, spent the budget or blocked the event loop before.
 */
export interface HostileDocument {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  /** The error code it is refused with. */
  code: 'BAD_USER_INPUT' | 'QUERY_TOO_COSTLY';
}

const LEVELS = 2500;

/** Fragments nested `depth` deep, each spreading the next twice: 2^depth expansions without a memo. */
export function fragmentsTwicePerLevel(tail: string, depth = 23): string {
  const chain = Array.from({ length: depth }, (_, i) => `fragment F${i} on Event { name ...F${i + 1} ...F${i + 1} }`);
  return `{ event(eventId: 5001) { ...F0 } } ${chain.join(' ')} fragment F${depth} on Event { ${tail} }`;
}

export const HOSTILE_DOCUMENTS: HostileDocument[] = [
  {
    name: 'a variable default of 1000 answers, each looking up its reservation',
    query:
      'query ($n: Int = 1000) { event(eventId: 5001) { attendeeAnswers(first: $n) { edges { node { answer reservation { reservationNumber } } } } } }',
    code: 'QUERY_TOO_COSTLY',
  },
  {
    name: 'events(eventIds: $ids) with a default of 150 ids',
    query: `query ($ids: [Int!]! = [${Array.from({ length: 150 }, (_, i) => 5001 + i).join(', ')}]) { events(eventIds: $ids) { name } }`,
    code: 'QUERY_TOO_COSTLY',
  },
  {
    name: 'fragments nested 23 deep, each spread twice',
    query: fragmentsTwicePerLevel(
      'reservations(first: 5000) { edges { node { attendee { reservations(eventId: 5001) { totalCount } } } } }',
    ),
    code: 'QUERY_TOO_COSTLY',
  },
  {
    name: '20,000 aliases',
    query: `{ ${Array.from({ length: 20_000 }, (_, i) => `e${i}: event(eventId: 5001) { name }`).join(' ')} }`,
    code: 'BAD_USER_INPUT',
  },
  {
    name: `braces ${LEVELS} deep`,
    query: `{ event(eventId: 5001) ${'{ __typename '.repeat(LEVELS)}${'}'.repeat(LEVELS)} }`,
    code: 'BAD_USER_INPUT',
  },
  {
    name: `inline fragments ${LEVELS} deep`,
    query: `{ ${'... on Query { '.repeat(LEVELS)}__typename${' }'.repeat(LEVELS)} }`,
    code: 'BAD_USER_INPUT',
  },
  {
    name: `list literals ${LEVELS} deep`,
    query: `{ events(eventIds: ${'['.repeat(LEVELS)}5001${']'.repeat(LEVELS)}) { name } }`,
    code: 'BAD_USER_INPUT',
  },
  {
    name: `an unclosed list literal ${LEVELS} deep`,
    query: `{ events(eventIds: ${'['.repeat(LEVELS)}`,
    code: 'BAD_USER_INPUT',
  },
  {
    name: `object literals ${LEVELS} deep`,
    query: `{ event(eventId: 5001) { reservations(filter: ${'{ label1: '.repeat(LEVELS)}"x"${' }'.repeat(LEVELS)}) { totalCount } } }`,
    code: 'BAD_USER_INPUT',
  },
  {
    name: `an introspection ofType chain ${LEVELS} deep`,
    query: `{ __type(name: "Event") { ${'ofType { '.repeat(LEVELS)}name${' }'.repeat(LEVELS)} } }`,
    code: 'BAD_USER_INPUT',
  },
  {
    name: 'a chain of 4000 fragments',
    query: `{ ...F0 } ${Array.from({ length: 4000 }, (_, i) => `fragment F${i} on Query { ...F${i + 1} }`).join(' ')} fragment F4000 on Query { __typename }`,
    code: 'BAD_USER_INPUT',
  },
];

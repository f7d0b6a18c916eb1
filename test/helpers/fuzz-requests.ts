/// <reference lib="es2024.string" />
import fc from 'fast-check';
import { CLIENT_KEYS } from '../auth/licensees-fixture.ts';

/**
 * Generated HTTP requests to the gateway for the fuzz test. `invalidRequest` builds only requests
 * that are wrong by construction (each must be refused before any upstream call); `anyRequest`
 * mixes them with valid ones and with odd values that may or may not be accepted. A string generated
 * for a document, a body or variables may be ill-formed UTF-16 (a lone surrogate, which JSON
 * allows): in a document or variables, that alone makes a request wrong by construction.
 */
export interface FuzzRequest {
  /** What the request is, for a failing run's report. */
  kind: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** The raw body (POST), not necessarily JSON. */
  body?: string;
  /** A query string for GET. */
  search?: string;
  /**
   * Upstream endpoints the valid part of the request may read before the invalid part is refused:
   * the event whose connection holds the bad cursor, filter or instant (the connection is checked
   * when it is resolved, under its event).
   */
  parentReads?: string[];
  /** The answer is `null` data rather than an error (an id that names nothing this licensee has). */
  answersNull?: true;
}

type ClientName = keyof typeof CLIENT_KEYS;
const READERS: ClientName[] = ['acme-web', 'globex-web'];
const WRITERS: ClientName[] = ['acme-ops', 'globex-ops'];
/** Event 5001, which the wrong-cursor and wrong-filter requests read, is acme's (licensee 1001). */
const ACME: ClientName[] = ['acme-web', 'acme-ops'];
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' };

/** A valid credential of one of the fixture's clients, in either of the two accepted headers. */
const credentialOf = (clients: ClientName[]) =>
  fc
    .tuple(fc.constantFrom(...clients), fc.boolean())
    .map(
      ([name, bearer]): Record<string, string> =>
        bearer ? { authorization: `Bearer ${CLIENT_KEYS[name]}` } : { 'x-api-key': CLIENT_KEYS[name] },
    );
const anyValidCredential = credentialOf([...READERS, ...WRITERS]);

/** A long string made cheaply: generating 100,000 characters one by one takes seconds. */
function huge(minLength: number, maxLength: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.string({ minLength: 1, maxLength: 40 }), fc.integer({ min: minLength, max: maxLength }))
    .map(([piece, length]) => piece.repeat(Math.ceil(length / piece.length)).slice(0, length));
}

/** Text no UTF-8 can carry, which JSON can (`"\ud83d"`): lone high and low surrogates, and a pair reversed. */
const LONE_SURROGATES = ['\ud83d', '\udbff', '\ude00', '\udc00', '\ude00\ud83d'];
/** `text` with a lone surrogate (or a reversed pair) at its start, in its middle or at its end. */
const illFormed = (text: fc.Arbitrary<string>) =>
  fc
    .tuple(text, fc.constantFrom(...LONE_SURROGATES), fc.constantFrom('start', 'middle', 'end'))
    .map(([s, lone, at]) => {
      const cut = at === 'start' ? 0 : at === 'end' ? s.length : Math.floor(s.length / 2);
      return s.slice(0, cut) + lone + s.slice(cut);
    });
/**
 * `text` as generated, or made ill-formed: every string generated for a document, a body or
 * variables. Not headers: they carry bytes, and fetch refuses a lone surrogate in one.
 */
const orIllFormed = (text: fc.Arbitrary<string>) => fc.oneof(text, illFormed(text));
/** A unit of generated JSON text: a printable ASCII character, now and then a lone surrogate or a reversed pair. */
const jsonTextUnit = fc.oneof(
  { weight: 20, arbitrary: fc.string({ minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom(...LONE_SURROGATES) },
);

const knownKeys = new Set<string>(Object.values(CLIENT_KEYS));
/** Text that is no client's key (a header's: never ill-formed). */
const notAKey = fc.string({ maxLength: 80 }).filter((s) => !knownKeys.has(s.trim()));

/** Missing, malformed, unknown or truncated credentials: each is refused with 401. */
export const wrongCredential: fc.Arbitrary<Record<string, string>> = fc.oneof(
  fc.constant({}),
  fc.constant({ authorization: 'Bearer' }),
  fc.constant({ authorization: 'Bearer ' }),
  notAKey.map((s) => ({ authorization: `Basic ${Buffer.from(`user:${s}`).toString('base64')}` })),
  notAKey.map((s) => ({ authorization: `Bearer ${s}` })),
  notAKey.filter((s) => s.trim() !== '').map((s) => ({ 'x-api-key': s })),
  fc.constantFrom(...Object.values(CLIENT_KEYS)).map((key) => ({ authorization: `Bearer ${key.slice(0, -1)}` })),
  fc.constantFrom(...Object.values(CLIENT_KEYS)).map((key) => ({ 'x-api-key': `${key}x` })),
  // Long, but under Node's 16 KiB header limit (beyond it Node answers 431 before the gateway sees it).
  huge(1000, 12_000).map((s) => ({ authorization: `Bearer ${s}` })),
);

const post = (kind: string, headers: Record<string, string>, body: string): FuzzRequest => ({
  kind,
  method: 'POST',
  headers: { ...JSON_HEADERS, ...headers },
  body,
});
const operation = (kind: string, headers: Record<string, string>, query: string, variables?: unknown): FuzzRequest =>
  post(kind, headers, JSON.stringify({ query, variables }));
const underEvent = (request: FuzzRequest): FuzzRequest => ({ ...request, parentReads: ['getevent'] });

const VALID_QUERIES = [
  '{ event(eventId: 5001) { name } }',
  '{ event(eventId: 6001) { name hotels { hotelId name } } }',
  '{ events(eventIds: [5001, 6001, 5002]) { name } }',
  '{ defaultQuestions { questionId } }',
  '{ event(eventId: 5001) { reservations(first: 2) { edges { cursor node { id reservationNumber } } } } }',
];

/** Values of every JSON type and some that are no Int: wrong for an `Int!` variable. */
const notAnInt = fc.oneof(
  orIllFormed(fc.string({ maxLength: 30 })),
  fc.double({ noInteger: true }),
  fc.constantFrom(2 ** 31, -(2 ** 31) - 1, 1e300, null, true, false),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(orIllFormed(fc.string({ maxLength: 5 })), fc.integer(), { maxKeys: 3 }),
);

/** Strings that are no yyyy-mm-dd date. */
const notADate = fc.oneof(
  orIllFormed(fc.string({ maxLength: 30 }).filter((s) => !/^\d{4}-\d{2}-\d{2}$/.test(s))),
  fc.constantFrom(
    '2027-02-30',
    '2027-13-01',
    '12-Mar-2027',
    '2027/03/12',
    '20270312',
    '2027-3-1',
    '0000-00-00',
    '2027-02-29',
  ),
  fc.integer(),
);
/** Strings that are no ISO 8601 instant. */
const notAnInstant = fc.oneof(
  orIllFormed(fc.string({ maxLength: 30 }).filter((s) => !/^\d{4}-/.test(s))),
  fc.constantFrom('2027-02-30T00:00:00Z', '2027-03-12T25:00:00Z', 'yesterday'),
  illFormed(fc.constant('2027-03-12T08:00:00Z')),
);
/** Strings that name no country (alpha-2, alpha-3 or name). */
const notACountry = orIllFormed(
  fc.oneof(fc.constantFrom('XX', 'ZZZ', 'Atlantis', 'U.S.S.R.', '12', 'Q'), fc.stringMatching(/^[0-9!?#]{1,6}$/)),
);

/** Text that is nothing the gateway handed out: no global id, no cursor. */
const junkId = orIllFormed(
  fc.oneof(
    fc.string({ maxLength: 60 }),
    fc.base64String({ maxLength: 80 }),
    fc.constantFrom('RXZlbnQ6NTAwMQ==', 'Event:5001', 'UmVzZXJ2YXRpb246MQ', ''),
  ),
);

// Beyond QUERY_MAX_ALIASES (30) or, for the longer ones, QUERY_MAX_TOKENS (1000).
const aliasFlood = fc
  .integer({ min: 31, max: 400 })
  .map((n) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: event(eventId: 5001) { name }`).join(' ')} }`);
// Beyond QUERY_MAX_DEPTH (12): an attendee's reservations' attendee's reservations …
const tooDeep = fc
  .integer({ min: 4, max: 40 })
  .map(
    (n) =>
      `{ event(eventId: 5001) { reservations(first: 1) { edges { node { ${'attendee { reservations(eventId: 5001, first: 1) { edges { node { '.repeat(n)}reservationNumber${' } } } }'.repeat(n)} } } } } }`,
  );
const bracesDeep = fc
  .integer({ min: 13, max: 3000 })
  .map((n) => `{ event(eventId: 5001) ${'{ __typename '.repeat(n)}${'}'.repeat(n)} }`);
const listsDeep = fc
  .integer({ min: 2, max: 3000 })
  .map((n) => `{ events(eventIds: ${'['.repeat(n)}5001${']'.repeat(n)}) { name } }`);
const objectsDeep = fc
  .integer({ min: 2, max: 3000 })
  .map(
    (n) =>
      `{ event(eventId: 5001) { reservations(first: 1, filter: ${'{ label1: '.repeat(n)}"x"${' }'.repeat(n)}) { totalCount } } }`,
  );
const unknownField = fc
  .stringMatching(/^[a-z][a-zA-Z]{0,20}$/)
  .filter(
    (name) =>
      ![
        'node',
        'nodes',
        'event',
        'events',
        'groupCodeLink',
        'editReservationLink',
        'defaultQuestions',
        'customFields',
      ].includes(name),
  );
const parseError = fc.oneof(
  orIllFormed(fc.string({ maxLength: 200 })).map((s) => `{ ${s.replace(/[{}]/g, '')}`),
  fc.constantFrom(
    '{',
    '}',
    'query',
    '{ event(eventId: ) { name } }',
    'query ($x: ) { __typename }',
    '{ event(eventId: 5001 { name } }',
    '"""',
  ),
);
/** A JSON body the GraphQL-over-HTTP rules refuse. */
const badBody = fc.oneof(
  orIllFormed(fc.string({ maxLength: 100 })).map((s) => `{"query": ${s}`),
  fc.constantFrom(
    '',
    'null',
    '[]',
    '42',
    '"{ __typename }"',
    '{"query": 42}',
    '{"query": null}',
    '{"query": ["{ __typename }"]}',
    '{"query": "{ __typename }", "variables": "x"}',
    '{"query": "{ __typename }", "variables": [1]}',
    '{"query": "{ __typename }", "extensions": 7}',
  ),
  fc
    .jsonValue({ maxDepth: 4, stringUnit: jsonTextUnit })
    .filter(
      (v) => !(v && typeof v === 'object' && !Array.isArray(v) && typeof (v as { query?: unknown }).query === 'string'),
    )
    .map((v) => JSON.stringify(v)),
  fc.integer({ min: 50, max: 5000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
  fc.integer({ min: 50, max: 5000 }).map((n) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`),
);
/**
 * Over 1,000 tokens (QUERY_MAX_TOKENS) or unparsable: a piece of only GraphQL's ignored characters
 * (spaces, commas) or with a comment sign is a valid `{ __typename }` however long it gets.
 */
const hugeTokens = orIllFormed(huge(100_000, 200_000).filter((s) => /[^\s,\ufeff]/.test(s) && !s.includes('#')));

/** Names that are no entity of the subgraph, Object.prototype's members among them (once a crash). */
const ENTITY_TYPES = ['Event', 'Hotel', 'Reservation', 'Attendee', 'EventQuestion', 'CustomField'];
const notAnEntityType = fc.oneof(
  fc.constantFrom(
    'constructor',
    '__proto__',
    'toString',
    'hasOwnProperty',
    'valueOf',
    'Registration',
    'event',
    'Query',
    '_Entity',
    '',
  ),
  orIllFormed(fc.string({ maxLength: 30 })).filter((name) => !ENTITY_TYPES.includes(name)),
);
/** Entities keyed by service numbers, and their key fields. */
const NUMBER_KEYED: [string, string[]][] = [
  ['Event', ['eventId']],
  ['Hotel', ['eventId', 'hotelId']],
  ['Reservation', ['eventId', 'reservationNumber']],
  ['EventQuestion', ['eventId', 'questionId']],
  ['CustomField', ['customFieldId']],
];
/** A key value that is no integer (undefined: the field is left out of the JSON). */
const notAKeyNumber = fc.oneof(
  fc.constantFrom(undefined, null, true, 1.5, '', 'five', '1e3', [], {}),
  orIllFormed(fc.string({ maxLength: 20 })).filter((s) => !/^-?\d+$/.test(s)),
);
const notAKeyText = fc.oneof(fc.constantFrom(undefined, null, 42, '', '   ', [], {}), illFormed(fc.constant('A-1')));
/** One reference other subgraphs could not have meant: an unknown type, no type, or a key missing or of the wrong type. */
const badReference: fc.Arbitrary<unknown> = fc.oneof(
  notAnEntityType.map((type) => ({ __typename: type, id: '1' })),
  fc.constantFrom({ eventId: 5001 }, { __typename: 5001, eventId: 5001 }, 'Event', 5001, [], true),
  fc.tuple(fc.constantFrom(...NUMBER_KEYED), fc.nat(), notAKeyNumber).map(([[type, fields], which, bad]) => ({
    __typename: type,
    ...Object.fromEntries(fields.map((field, i) => [field, i === which % fields.length ? bad : 5001])),
  })),
  fc.tuple(fc.boolean(), notAKeyText).map(([first, bad]) => ({
    __typename: 'Attendee',
    attendeeId: first ? bad : 'A-1',
    registrationEventId: first ? 'R-1' : bad,
  })),
);
const goodReference = fc.constantFrom(
  { __typename: 'Event', eventId: 5001 },
  { __typename: 'Hotel', eventId: 5001, hotelId: 201 },
  { __typename: 'Attendee', attendeeId: 'A-1', registrationEventId: 'R-1' },
);
/** Good references around one bad one: the whole `_entities` is refused before any reference is read. */
const representationsWithABadOne = fc
  .tuple(fc.array(goodReference, { maxLength: 3 }), badReference, fc.array(goodReference, { maxLength: 3 }))
  .map(([before, bad, after]) => [...before, bad, ...after]);

const UPSERT_ATTENDEE = 'mutation ($v: UpsertAttendeeInput!) { upsertAttendee(input: $v) { attendee { id } } }';
const CHANGES =
  'subscription ($since: DateTime, $filter: ReservationChangeFilter) { reservationChanged(eventId: 5001, since: $since, filter: $filter) { kind } }';
/**
 * Valid operations, over POST or (the subscriptions) SSE, but for one string of their variables,
 * at each place a client's text goes (arguments, input objects and lists, ids, cursors, `since`,
 * filters, federation references), given `text`.
 */
const ILL_FORMED_PLACES: { clients: ClientName[]; query: string; variables: (text: string) => unknown }[] = [
  {
    clients: READERS,
    query: 'query ($s: String) { event(eventId: 5001) { hotels(filter: { city: $s }) { hotelId } } }',
    variables: (s) => ({ s }),
  },
  { clients: READERS, query: 'query ($id: ID!) { node(id: $id) { id } }', variables: (id) => ({ id }) },
  {
    clients: READERS,
    query: 'query ($ids: [ID!]!) { nodes(ids: $ids) { id } }',
    variables: (id) => ({ ids: ['RXZlbnQ6NTAwMQ==', id] }),
  },
  {
    clients: READERS,
    query: 'query ($c: String) { event(eventId: 5001) { reservations(first: 2, after: $c) { totalCount } } }',
    variables: (c) => ({ c }),
  },
  {
    clients: READERS,
    query: 'query ($r: [_Any!]!) { _entities(representations: $r) { __typename } }',
    variables: (attendeeId) => ({ r: [{ __typename: 'Attendee', attendeeId, registrationEventId: 'R-1' }] }),
  },
  {
    clients: WRITERS,
    query: UPSERT_ATTENDEE,
    variables: (s) => ({ v: { attendeeId: s, registrationEventId: 'R-1' } }),
  },
  {
    clients: WRITERS,
    query: UPSERT_ATTENDEE,
    variables: (s) => ({ v: { attendeeId: 'A-1', registrationEventId: s } }),
  },
  {
    clients: WRITERS,
    query: UPSERT_ATTENDEE,
    variables: (s) => ({ v: { attendeeId: 'A-1', registrationEventId: 'R-1', ccEmails: ['a@example.com', s] } }),
  },
  {
    clients: WRITERS,
    query:
      'mutation ($input: CreateCustomFieldInput!) { createCustomField(input: $input) { customField { customFieldId } } }',
    variables: (name) => ({ input: { name, eventId: 5001 } }),
  },
  { clients: READERS, query: CHANGES, variables: (since) => ({ since }) },
  { clients: READERS, query: CHANGES, variables: (groupCode) => ({ filter: { groupCode } }) },
];
const illFormedVariable: fc.Arbitrary<FuzzRequest> = fc
  .constantFrom(...ILL_FORMED_PLACES)
  .chain(({ clients, query, variables }) =>
    fc
      .tuple(
        credentialOf(clients),
        illFormed(fc.oneof(fc.string({ maxLength: 20 }), fc.constant('2027-03-12T08:00:00Z'))),
      )
      .map(([headers, text]) => {
        const request = operation('ill-formed text', headers, query, variables(text));
        // A subscription over SSE: its refusal is the stream's one event.
        return query === CHANGES
          ? { ...request, headers: { ...request.headers, accept: 'text/event-stream' } }
          : request;
      }),
  );

/** Requests wrong by construction. Each must be answered with an error before any upstream call. */
export const invalidRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  fc
    .tuple(wrongCredential, fc.constantFrom(...VALID_QUERIES))
    .map(([headers, query]) => operation('wrong credential', headers, query)),
  fc.tuple(wrongCredential, fc.constantFrom(...VALID_QUERIES)).map(
    ([headers, query]): FuzzRequest => ({
      kind: 'wrong credential, GET',
      method: 'GET',
      headers: { accept: 'application/json', ...headers },
      search: `?query=${encodeURIComponent(query)}`,
    }),
  ),
  fc
    .tuple(
      credentialOf(READERS),
      fc.constantFrom(
        'mutation { createCustomField(input: { name: "x", eventId: 5001 }) { customField { customFieldId } } }',
        'mutation { upsertAttendee(input: { attendeeId: "A", registrationEventId: "R" }) { attendee { attendeeId } } }',
      ),
    )
    .map(([headers, query]) => operation('read client mutation', headers, query)),
  fc.tuple(anyValidCredential, badBody).map(([headers, body]) => post('malformed JSON body', headers, body)),
  fc.tuple(anyValidCredential, parseError).map(([headers, query]) => operation('parse error', headers, query)),
  fc
    .tuple(anyValidCredential, orIllFormed(unknownField))
    .map(([headers, field]) => operation('unknown field', headers, `{ ${field} }`)),
  fc.tuple(anyValidCredential, aliasFlood).map(([headers, query]) => operation('alias flood', headers, query)),
  fc
    .tuple(anyValidCredential, fc.oneof(tooDeep, bracesDeep, listsDeep, objectsDeep))
    .map(([headers, query]) => operation('deep nesting', headers, query)),
  fc
    .tuple(anyValidCredential, hugeTokens)
    .map(([headers, s]) => operation('huge document', headers, `{ __typename ${s} }`)),
  fc
    .tuple(anyValidCredential, notAnInt)
    .map(([headers, e]) =>
      operation('wrong variable type', headers, 'query ($e: Int!) { event(eventId: $e) { name } }', { e }),
    ),
  fc
    .tuple(anyValidCredential, fc.array(notAnInt, { minLength: 1, maxLength: 5 }))
    .map(([headers, es]) =>
      operation('wrong list item type', headers, 'query ($es: [Int!]!) { events(eventIds: $es) { name } }', { es }),
    ),
  fc
    .tuple(credentialOf(ACME), orIllFormed(huge(256, 5000)))
    .map(([headers, s]) =>
      underEvent(
        operation(
          'huge filter string',
          headers,
          'query ($s: String) { event(eventId: 5001) { hotels(filter: { city: $s }) { hotelId } } }',
          { s },
        ),
      ),
    ),
  fc
    .tuple(credentialOf(WRITERS), notADate)
    .map(([headers, date]) =>
      operation(
        'malformed date',
        headers,
        'mutation ($d: Date!) { recordActualizedPickup(input: { eventId: 5001, hotelId: 1, nights: [{ date: $d, rooms: 1 }] }) { stored } }',
        { d: date },
      ),
    ),
  fc
    .tuple(credentialOf(ACME), notAnInstant)
    .map(([headers, at]) =>
      underEvent(
        operation(
          'malformed instant',
          headers,
          'query ($at: DateTime) { event(eventId: 5001) { reservations(first: 1, filter: { modifiedAfter: $at }) { totalCount } } }',
          { at },
        ),
      ),
    ),
  fc
    .tuple(credentialOf(WRITERS), notACountry)
    .map(([headers, country]) =>
      operation(
        'malformed country',
        headers,
        'mutation ($c: String) { upsertAttendee(input: { attendeeId: "A-1", registrationEventId: "R-1", country: $c }) { attendee { attendeeId } } }',
        { c: country },
      ),
    ),
  // An ill-formed id is refused whole, not answered null.
  fc.tuple(anyValidCredential, junkId).map(([headers, id]) => ({
    ...operation('junk global id', headers, 'query ($id: ID!) { node(id: $id) { id } }', { id }),
    ...(id.isWellFormed() ? { answersNull: true as const } : {}),
  })),
  fc.tuple(anyValidCredential, fc.array(junkId, { maxLength: 5 })).map(([headers, ids]) => ({
    ...operation('junk global ids', headers, 'query ($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids }),
    ...(ids.every((id) => id.isWellFormed()) ? { answersNull: true as const } : {}),
  })),
  fc
    .tuple(
      credentialOf(ACME),
      junkId.filter((s) => s !== ''),
    )
    .map(([headers, cursor]) =>
      underEvent(
        operation(
          'junk cursor',
          headers,
          'query ($c: String) { event(eventId: 5001) { reservations(first: 2, after: $c) { totalCount } } }',
          { c: cursor },
        ),
      ),
    ),
  fc
    .tuple(anyValidCredential, representationsWithABadOne)
    .map(([headers, r]) =>
      operation(
        'bad _entities reference',
        headers,
        'query ($r: [_Any!]!) { _entities(representations: $r) { __typename } }',
        { r },
      ),
    ),
  illFormedVariable,
);

/** Depth-nested JSON of any shape, to send as variables whatever the operation declares. */
const oddVariables = fc.oneof(
  fc.jsonValue({ maxDepth: 6, stringUnit: jsonTextUnit }),
  fc.dictionary(
    fc.constantFrom('e', 'es', 'id', 'ids', 'c', 'd', 'at', 'input'),
    fc.jsonValue({ maxDepth: 3, stringUnit: jsonTextUnit }),
  ),
);

/** Valid requests, invalid ones, and valid documents with odd variables or headers. */
export const anyRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  { weight: 3, arbitrary: invalidRequest },
  {
    weight: 1,
    arbitrary: fc
      .tuple(anyValidCredential, fc.constantFrom(...VALID_QUERIES))
      .map(([headers, query]) => operation('valid', headers, query)),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.oneof(anyValidCredential, wrongCredential),
        fc.constantFrom(
          'query ($e: Int!) { event(eventId: $e) { name } }',
          'query ($ids: [ID!]!) { nodes(ids: $ids) { id } }',
          'mutation ($input: SetCustomFieldValueInput!) { setCustomFieldValue(input: $input) { value } }',
        ),
        oddVariables,
      )
      .map(([headers, query, variables]) => operation('odd variables', headers, query, variables)),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        anyValidCredential,
        fc.dictionary(
          fc.stringMatching(/^x-[a-z-]{1,20}$/),
          fc.string({ maxLength: 200 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
          { maxKeys: 4 },
        ),
        fc.constantFrom(
          'text/plain',
          'application/x-www-form-urlencoded',
          'application/graphql+json',
          'multipart/form-data',
          'application/json; charset=latin1',
        ),
      )
      .map(
        ([credential, extra, contentType]): FuzzRequest => ({
          ...operation('odd headers', { ...extra, ...credential }, VALID_QUERIES[0]!),
          headers: { ...JSON_HEADERS, ...extra, ...credential, 'content-type': contentType },
        }),
      ),
  },
);

/** JSON text `levels` deep, of arrays or of objects, built without recursion. */
const deepText = (levels: number, objects: boolean) =>
  objects ? `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}` : `${'['.repeat(levels)}1${']'.repeat(levels)}`;
/** An array of `n` numbers, or an object of `n` keys (short ones: 100,000 of them stay under MAX_REQUEST_BYTES). */
const wideText = (n: number, objects: boolean) =>
  objects
    ? `{${Array.from({ length: n }, (_, i) => `"${i.toString(36)}":0`).join(',')}}`
    : `[${new Array(n).fill(0).join(',')}]`;

/** JSON past MAX_INPUT_DEPTH (64) or MAX_INPUT_NODES (50,000), and the setting that refuses it. */
export interface BoundedInput {
  text: string;
  shape: string;
  limit: 'MAX_INPUT_DEPTH' | 'MAX_INPUT_NODES';
}
const tooDeepInput = (maxLevels: number, objects = fc.boolean()): fc.Arbitrary<BoundedInput> =>
  fc.tuple(fc.integer({ min: 65, max: maxLevels }), objects).map(([levels, object]) => ({
    text: deepText(levels, object),
    shape: `${levels} deep (${object ? 'objects' : 'arrays'})`,
    limit: 'MAX_INPUT_DEPTH' as const,
  }));
const tooWideInput: fc.Arbitrary<BoundedInput> = fc
  .tuple(fc.integer({ min: 50_001, max: 100_000 }), fc.boolean())
  .map(([n, object]) => ({
    text: wideText(n, object),
    shape: `${n} wide (${object ? 'an object' : 'an array'})`,
    limit: 'MAX_INPUT_NODES' as const,
  }));
export const boundedInput: fc.Arbitrary<BoundedInput> = fc.oneof(tooDeepInput(6000), tooWideInput);

const BOUNDED_QUERY = 'query ($eventIds: [Int!]!) { events(eventIds: $eventIds) { name } }';
const BOUNDED_SUBSCRIPTION = 'subscription ($eventId: Int!) { reservationChanged(eventId: $eventId) { kind } }';
/** Where a request carries the input: its variables, its extensions, another body parameter, a batch's variables. */
const PLACES = ['variables', 'extensions', 'other parameter', 'batch'] as const;
/** The parameters (as JSON text) of an operation carrying `text` in `place`. */
function paramsText(query: string, text: string, place: (typeof PLACES)[number]): string {
  const variables = '{"eventIds": [5001], "eventId": 5001';
  const params =
    place === 'extensions'
      ? `{"query": ${JSON.stringify(query)}, "variables": ${variables}}, "extensions": {"x": ${text}}}`
      : place === 'other parameter'
        ? `{"query": ${JSON.stringify(query)}, "variables": ${variables}}, "z": ${text}}`
        : `{"query": ${JSON.stringify(query)}, "variables": ${variables}, "v": ${text}}}`;
  return place === 'batch' ? `[${params}]` : params;
}

/**
 * Deep and wide input on each HTTP door: a POST body (any place), a GET query string (variables or
 * extensions, arrays at most 1500 deep: Node answers a URL past 16 KiB with 431 before the gateway)
 * and SSE (a POST asking for text/event-stream). Each must be a 400 naming `limit`.
 */
export const boundedInputRequest: fc.Arbitrary<FuzzRequest & { limit: BoundedInput['limit'] }> = fc.oneof(
  fc
    .tuple(anyValidCredential, boundedInput, fc.constantFrom(...PLACES), fc.boolean())
    .map(([headers, input, place, sse]) => ({
      ...post(
        `${input.shape} in the ${place}, ${sse ? 'SSE' : 'POST'}`,
        headers,
        paramsText(sse ? BOUNDED_SUBSCRIPTION : BOUNDED_QUERY, input.text, place),
      ),
      ...(sse ? { headers: { ...JSON_HEADERS, ...headers, accept: 'text/event-stream' } } : {}),
      limit: input.limit,
    })),
  fc
    .tuple(anyValidCredential, tooDeepInput(1500, fc.constant(false)), fc.constantFrom('variables', 'extensions'))
    .map(([headers, input, place]) => ({
      kind: `${input.shape} in the ${place}, GET`,
      method: 'GET' as const,
      headers: { accept: 'application/json', 'graphql-preflight': '1', ...headers },
      search: `?${new URLSearchParams({
        query: BOUNDED_QUERY,
        variables: place === 'variables' ? `{"eventIds": [5001], "v": ${input.text}}` : '{"eventIds": [5001]}',
        ...(place === 'extensions' ? { extensions: `{"x": ${input.text}}` } : {}),
      })}`,
      limit: input.limit,
    })),
);

/** Requests malformed below GraphQL on the GET and SSE doors (the POST door's: `badBody`). */
export const malformedHttpRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  fc
    .tuple(
      anyValidCredential,
      fc.constantFrom('variables', 'extensions'),
      orIllFormed(fc.string({ minLength: 1, maxLength: 40 })),
    )
    .filter(([, , text]) => {
      try {
        JSON.parse(text);
        return false;
      } catch {
        return true;
      }
    })
    .map(([headers, name, text]) => ({
      kind: `GET with ${name} that is no JSON`,
      method: 'GET' as const,
      headers: { accept: 'application/json', 'graphql-preflight': '1', ...headers },
      search: `?${new URLSearchParams({ query: '{ __typename }', [name]: text })}`,
    })),
  fc.tuple(anyValidCredential, badBody).map(([headers, body]) => ({
    ...post('malformed JSON body, SSE', headers, body),
    headers: { ...JSON_HEADERS, ...headers, accept: 'text/event-stream' },
  })),
);

/** A graphql-ws exchange: the `connection_init` payload and then the message sent, as raw text. */
export interface WsFuzz {
  kind: string;
  init: string;
  message?: string;
  /** The setting that must refuse it, or none: then a malformed message, closed with 4400 or answered with `error`. */
  limit?: BoundedInput['limit'];
}

const initWith = (key: string) =>
  JSON.stringify({ type: 'connection_init', payload: { Authorization: `Bearer ${key}` } });

/** Deep and wide payloads (in `subscribe` and in `connection_init`) and malformed messages on the graphql-ws door. */
export const wsRequest: fc.Arbitrary<WsFuzz> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(...READERS),
      boundedInput,
      fc.constantFrom('variables', 'extensions', 'other parameter' as const),
      fc.boolean(),
    )
    .map(([client, input, place, subscription]) => ({
      kind: `graphql-ws subscribe: ${input.shape} in the ${place}`,
      init: initWith(CLIENT_KEYS[client]),
      message: `{"id": "1", "type": "subscribe", "payload": ${paramsText(subscription ? BOUNDED_SUBSCRIPTION : BOUNDED_QUERY, input.text, place)}}`,
      limit: input.limit,
    })),
  fc.tuple(fc.constantFrom(...READERS), boundedInput).map(([client, input]) => ({
    kind: `graphql-ws connection_init: ${input.shape}`,
    init: `{"type": "connection_init", "payload": {"Authorization": "Bearer ${CLIENT_KEYS[client]}", "x": ${input.text}}}`,
    limit: input.limit,
  })),
  fc
    .tuple(
      fc.constantFrom(...READERS),
      fc.oneof(
        orIllFormed(fc.string({ maxLength: 60 })),
        fc.constantFrom(
          '{"type": "subscribe"}',
          '{"id": "1", "type": "subscribe", "payload": {"query": 42}}',
          '{"id": "1", "type": "subscribe", "payload": {"query": "{ __typename }", "variables": [1]}}',
          '{"id": 1, "type": "subscribe", "payload": {"query": "{ __typename }"}}',
          '{"type": "connection_init"}',
          // Not here: a message only a server sends (`next`, `error`, `connection_ack`): graphql-ws
          // closes the socket with 4500, its internal error, for it (a library behaviour, left as is).
        ),
        fc.integer({ min: 50, max: 5000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
      ),
    )
    .map(([client, message]) => ({
      kind: 'graphql-ws malformed message',
      init: initWith(CLIENT_KEYS[client]),
      message,
    })),
);

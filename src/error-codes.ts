/**
 * The codes a client reads in an error's `extensions.code` (docs/clients.md, "Errors"), each with what it
 * means. Every error the gateway answers carries one of these. Plain data, importing nothing, so
 * that every layer (the upstream one included) names its codes from here. An error below a
 * mutation's root field also carries `extensions.writeApplied: true`, whatever its code: the write
 * took effect (operations/write-applied.ts).
 */
export const ERROR_CODES = {
  BAD_USER_INPUT: 'the input is invalid (checked before any call), or the service refused a parameter from the client',
  UNAUTHENTICATED: 'the client’s own credentials to the gateway are missing or wrong',
  FORBIDDEN: 'the client may not do this (a scope it lacks)',
  NOT_FOUND: 'a mutation’s target does not exist upstream (a lookup of one missing thing is null instead)',
  RATE_LIMITED: 'the licensee’s upstream budget could not serve the call in time (extensions.retryAfterSeconds)',
  OVERLOADED:
    'the gateway holds as many large operations as its memory bound allows; this one waited its turn too long (extensions.retryAfterSeconds)',
  IDEMPOTENT_REQUEST_IN_PROGRESS:
    'an operation with the same Idempotency-Key is still running, and this repeat waited for its answer too long (HTTP 409, extensions.retryAfterSeconds)',
  QUERY_TOO_COSTLY: 'the operation could make more upstream calls than one operation may; nothing was sent',
  UPSTREAM_UNAVAILABLE: 'the service could not be reached: network, timeout, 5xx, open circuit',
  UPSTREAM_ERROR: 'the service answered in a way the gateway cannot use, or refused the gateway’s credentials',
  PERSISTED_QUERY_NOT_FOUND: 'with trusted documents: no trusted document has the id sent',
  GRAPHQL_PARSE_FAILED: 'the document is not valid GraphQL syntax (Yoga’s code, on every door)',
  GRAPHQL_VALIDATION_FAILED: 'the document does not fit the schema: an unknown field, a wrong argument (Yoga’s code)',
  OPERATION_RESOLUTION_FAILURE:
    'the operation named is not in the document, or several are and none is named (Yoga’s code)',
  BAD_REQUEST:
    'unreadable as GraphQL: malformed JSON, JSON past MAX_INPUT_DEPTH or MAX_INPUT_NODES, an unserved media type, a cross-site request with no preflight header',
  REQUEST_ENTITY_TOO_LARGE:
    'the request body is larger than MAX_REQUEST_BYTES (HTTP 413, Yoga’s code); nothing was read or run',
  MISDIRECTED_REQUEST:
    'the request’s Host is not one of the names the gateway answers for (ALLOWED_HOSTS; HTTP 421, against DNS rebinding); nothing ran',
  INTERNAL_SERVER_ERROR: 'anything else (details are logged, never sent)',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes by name, for the code that answers one: `extensions: { code: ErrorCode.NOT_FOUND }`. */
export const ErrorCode = Object.fromEntries(Object.keys(ERROR_CODES).map((code) => [code, code])) as {
  readonly [C in ErrorCode]: C;
};

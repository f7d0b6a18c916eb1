import type { SettingName } from './environment.ts';

/**
 * What each setting means, by group: the prose of docs/settings.md's tables. The schema of the
 * environment (environment.ts) is the truth about names, defaults and allowed values;
 * scripts/print-settings.ts (`npm run codegen`) prints docs/settings.md from both, with the text
 * around the tables from scripts/settings.template.md, and fails when a setting of the schema has
 * no row here. A row names one setting or several that share one meaning.
 */
export interface SettingRow {
  readonly settings: readonly SettingName[];
  readonly meaning: string;
  /**
   * The default as readers should read it, when the schema's own default does not say it (a
   * setting without one in the schema, or whose effective default depends on other settings).
   * Without it, the row shows the schema's defaults.
   */
  readonly default?: string;
}

/** The groups of docs/settings.md, keyed by their heading's anchor, in the order they are printed. */
export const SETTING_GROUPS: Readonly<Record<string, readonly SettingRow[]>> = {
  server: [
    {
      settings: ['PORT', 'HOST'],
      meaning: 'where the gateway listens',
    },
    {
      settings: ['CORS_ORIGINS'],
      meaning:
        'origins whose pages may call the gateway (comma-separated, like `https://app.example.com`); others get no CORS headers',
      default:
        'none (GraphiQL is same-origin); on a loopback `HOST`, pages on `http://localhost:<any port>` and `http://127.0.0.1:<any port>`',
    },
    {
      settings: ['GRAPHQL_JIT'],
      meaning: '`on`: operations are compiled once per document with graphql-jit; `off`: they run on graphql-js',
    },
    {
      settings: ['ALLOWED_HOSTS'],
      meaning:
        'host names the gateway answers for (comma-separated, without port or scheme, like `api.example.com,10.0.0.5`); any other `Host` gets 421 over HTTP and at the WebSocket upgrade (`/health` and `/ready` answer any); pages of these names, and of `CORS_ORIGINS`, may open WebSockets',
      default: '`localhost,127.0.0.1,[::1]` when `HOST` is a loopback address; otherwise required',
    },
    {
      settings: ['GRAPHIQL'],
      meaning:
        '`on`: GraphiQL at `/graphql` for browsers (compressed, under a strict Content-Security-Policy); `off`: a browser gets 404',
      default: '`on` with a loopback `HOST`, `off` otherwise',
    },
    {
      settings: ['QUERY_MAX_BYTES'],
      meaning:
        'longer documents (UTF-8 bytes, comments and whitespace included) are refused before they are parsed, over HTTP, SSE and WebSocket (413, `BAD_USER_INPUT`, `extensions.limit`)',
    },
    {
      settings: ['MAX_REQUEST_BYTES'],
      meaning:
        'larger request bodies get 413 (`extensions.limit`) before they are read (on Content-Length, or once a streamed body passes it); a larger WebSocket message, `connection_init` included, closes its socket with 1009',
    },
    {
      settings: ['MAX_INPUT_DEPTH'],
      meaning:
        'deeper `variables`, `extensions` or request bodies are refused with 400 `BAD_REQUEST` (`extensions.limit`) as soon as they are parsed, before anything reads them, over HTTP (POST, GET), SSE and WebSocket (an `error` for that operation; a `connection_init` payload closes its socket with 4400); the variables object is level 1; at most 1000',
    },
    {
      settings: ['MAX_INPUT_NODES'],
      meaning:
        "values (every member and element, containers included) one request may carry in its `variables`, `extensions` and the rest of its body together; more are refused like `MAX_INPUT_DEPTH`. The largest real input is a federation router's `_entities` for a page of 5000 references (about 20,000 values)",
    },
    {
      settings: ['HTTP_HEADERS_TIMEOUT_MS', 'HTTP_REQUEST_TIMEOUT_MS'],
      meaning:
        "time a client has to send its headers, and its whole request (408 after; the headers' at most the request's); answers are not timed: `@stream` and SSE answers last as long as they need",
    },
    {
      settings: ['HTTP_KEEP_ALIVE_TIMEOUT_MS'],
      meaning: 'how long an idle keep-alive connection is kept',
    },
    {
      settings: ['MAX_CONNECTIONS'],
      meaning: 'connections open at once (HTTP and WebSocket); more are closed as they arrive',
    },
  ],
  upstream: [
    {
      settings: ['UPSTREAM_BASE_URL'],
      meaning: 'the REST service, without `/api/…`',
      default: 'unset: the embedded emulator with demo data',
    },
    {
      settings: ['UPSTREAM_KEY', 'UPSTREAM_SYSTEM_IDENTIFIER'],
      meaning: "the single licensee's key and number",
      default: "the emulator's `demo-key-1001` / `1001`",
    },
    {
      settings: ['UPSTREAM_TIMEZONE'],
      meaning: "IANA zone of the licensee's wall-clock timestamps (default of each licensee's `timezone`)",
    },
    {
      settings: ['UPSTREAM_RATE_LIMIT', 'UPSTREAM_RATE_WINDOW_MS'],
      meaning:
        "calls per rolling window per licensee (`UPSTREAM_RATE_LIMIT` is the default of each licensee's `rateLimit`)",
    },
    {
      settings: ['UPSTREAM_RATE_MARGIN'],
      meaning: 'share of the limit kept unused against clock and network skew',
    },
    {
      settings: ['UPSTREAM_TIMEOUT_MS'],
      meaning: 'timeout of one upstream attempt (connect, headers, body)',
    },
    {
      settings: ['UPSTREAM_DEADLINE_MS'],
      meaning: 'how long one call may wait for the budget and its retries',
    },
    {
      settings: ['UPSTREAM_USER_AGENT'],
      meaning: 'User-Agent sent upstream',
      default: '`reservation-gateway/<version>`',
    },
  ],
  'clients-and-auth': [
    {
      settings: ['LICENSEES_FILE'],
      meaning:
        'JSON file of the licensees served and the clients allowed to use each; all share `UPSTREAM_BASE_URL`. Read again when it changes and on SIGHUP ([Reloads](operating.md#reloads))',
      default: 'unset: the one licensee above',
    },
    {
      settings: ['GATEWAY_AUTH'],
      meaning: 'how clients prove who they are: `none`, `api-key` or `jwt`',
      default: '`none`; `api-key` with `LICENSEES_FILE`',
    },
    {
      settings: ['JWT_SECRET'],
      meaning: 'with `jwt`: the HS256 secret (its UTF-8 text, at least 32 bytes)',
      default: 'unset',
    },
    {
      settings: ['JWT_JWKS_URL'],
      meaning: "with `jwt`, instead of `JWT_SECRET`: the identity provider's key set (RS256, ES256)",
      default: 'unset',
    },
    {
      settings: ['JWT_ISSUER', 'JWT_AUDIENCE'],
      meaning: 'with `jwt` (required): the `iss` and `aud` every token must carry',
      default: 'unset',
    },
    {
      settings: ['JWT_LICENSEE_CLAIM'],
      meaning: "with `jwt`: the claim holding the licensee's `id` of `LICENSEES_FILE`",
    },
    {
      settings: ['ROUTER_HMAC_SECRET'],
      meaning:
        "serve only the company graph's router: every operation must carry Hive Gateway's `hmacSignature` made with this secret (the same `secret` in the router's config; at least 32 characters); any other is refused with 401 `UNAUTHENTICATED` before it is read, on HTTP, SSE and graphql-ws ([Federating](federating.md#federating)); never shown",
      default: 'unset: any client may call',
    },
    {
      settings: ['GATEWAY_AUTH_NONE_ON_PUBLIC_HOST'],
      meaning:
        '`yes`: allow `GATEWAY_AUTH=none` on a `HOST` that is not a loopback address (a proxy in front authenticates every client); otherwise the gateway refuses to start (exit 2)',
    },
  ],
  limits: [
    {
      settings: ['QUERY_MAX_UPSTREAM_CALLS'],
      meaning:
        "operations estimated to need more upstream calls are refused (`QUERY_TOO_COSTLY`); a batch's operations together too",
    },
    {
      settings: ['MAX_BATCH_OPERATIONS'],
      meaning:
        'operations one batched request (a JSON array at `POST /graphql`) may hold, 1 to 100; more get 400 (`BAD_USER_INPUT`, `extensions.limit: "MAX_BATCH_OPERATIONS"`) before anything runs',
    },
    {
      settings: ['QUERY_MAX_DEPTH', 'QUERY_MAX_ALIASES', 'QUERY_MAX_DIRECTIVES'],
      meaning:
        'deeper documents, more aliases, more directives are refused (`BAD_USER_INPUT`, `extensions.limit` names the setting)',
    },
    {
      settings: ['QUERY_MAX_TOKENS'],
      meaning: 'larger documents are refused while parsed (`BAD_USER_INPUT`); at most 1200',
    },
    {
      settings: ['MAX_INFLIGHT_BYTES'],
      meaning:
        'bytes large operations (a window over 200 records) may hold at once, each reserving about 10 KiB per record it asks for; the others wait their turn in arrival order',
      default:
        "an eighth of the container's memory limit (cgroup `memory.max`), or of the machine's memory, at least 32 MiB",
    },
    {
      settings: ['MAX_INFLIGHT_WAIT_MS'],
      meaning:
        'how long a large operation waits for its turn before it is refused with `OVERLOADED` and `extensions.retryAfterSeconds`',
    },
    {
      settings: ['TRUSTED_DOCUMENTS_FILE'],
      meaning:
        'a manifest of the only operations that run, sent by id; checked at start, read again when it changes and on SIGHUP ([Reloads](operating.md#reloads))',
      default: 'unset: any document runs',
    },
  ],
  caching: [
    {
      settings: ['UPSTREAM_PAGE_TTL_MS'],
      meaning:
        'how long pages of reservations and attendee answers, and their page counts, are shared across operations (`0`: shared only while in flight)',
    },
    {
      settings: ['UPSTREAM_STALE_MAX_MS'],
      meaning:
        'how old a held copy of a read may be to answer it when the budget is spent, marked in `extensions.stale` ([When the budget is spent](clients.md#when-the-budget-is-spent)); `0`: none held, `RATE_LIMITED`',
    },
    {
      settings: ['RESPONSE_CACHE'],
      meaning:
        '`on`: whole answers are kept and served again with no upstream call; `off`: none kept (answers are still measured for their `Cache-Control` lifetime)',
    },
    {
      settings: ['RESPONSE_CACHE_TTLS'],
      meaning: 'lifetimes in ms by type, replacing the defaults, e.g. `Event=300000,Reservation=2000`',
      default: 'the defaults',
    },
  ],
  'live-changes': [
    {
      settings: ['CHANGES_POLL_INTERVAL_MS'],
      meaning: 'how often each change feed of `reservationChanged` polls the service (one feed per licensee and event)',
    },
    {
      settings: ['SUBSCRIPTIONS_PER_CLIENT'],
      meaning:
        'live subscriptions one client (a principal: its licensee and client name) may hold at once, over SSE and graphql-ws together, and on one socket; past it a subscription is refused with `RATE_LIMITED` (`extensions.limit`)',
    },
    {
      settings: ['SUBSCRIPTION_KEEPALIVE_MS'],
      meaning:
        "how often a live subscription's connection carries something while nothing happens: a `:` comment on each SSE stream (one timer for all of them), a ping on each graphql-ws socket (closed when its pong has not come by the next); keep it under the idle timeout of every proxy or load balancer on the way (often 60 s)",
    },
    {
      settings: ['SUBSCRIPTION_CALLBACK_URLS'],
      meaning:
        "URL prefixes a router's subscription callbacks may go to (comma-separated, like `https://router.internal:4000/callback`): same scheme, host and port, and a path at or below the prefix's; a subscription naming any other `callbackUrl` is refused with 400 (`BAD_USER_INPUT`) before anything is sent to it ([Subscriptions through router callbacks](clients.md#subscriptions-through-router-callbacks))",
      default: 'unset: callback subscriptions refused with 400 naming this setting',
    },
    {
      settings: ['WEBHOOK_ALLOW_HTTP_HOSTS'],
      meaning:
        'for local development only: host names or addresses (comma-separated, like `localhost,127.0.0.1`, matched as written in the URL) that webhook endpoints may name over plain HTTP and at a non-public address; every other endpoint must be HTTPS to a host whose every address is public unicast ([Webhooks](webhooks.md#where-a-webhook-may-go))',
      default: 'unset: HTTPS to public addresses only',
    },
    {
      settings: ['WEBHOOK_DISABLE_AFTER_HOURS'],
      meaning:
        'a webhook endpoint whose attempts have all failed for this many hours is disabled, its `disabledReason` saying since when ([Webhooks](webhooks.md#the-queue-and-its-retries))',
    },
    {
      settings: ['WEBHOOK_TIMEOUT_MS'],
      meaning:
        "how long one webhook delivery attempt may take, connection to answer, before it counts as failed; with Redis a replica claims a delivery for twice as long, so a dead replica's delivery is sent by another after that ([Webhooks](webhooks.md#the-queue-and-its-retries))",
    },
    {
      settings: ['WEBHOOK_SECRET_KEY'],
      meaning:
        "a secret: with `REDIS_URL`, webhook endpoints' signing secrets are sealed in Redis with this AES-256-GCM key (64 hex digits, for example the output of `openssl rand -hex 32`); to change it, give the new key first and the old one after it, comma-separated (the first seals, each opens; an endpoint is sealed again with the first when it is next saved). Losing it makes every sealed secret unreadable: those endpoints can then only be deleted and registered again ([Webhooks](webhooks.md#endpoints))",
      default: "unset: the secrets are kept in Redis in clear (Redis must then be trusted like the gateway's memory)",
    },
  ],
  replicas: [
    {
      settings: ['REDIS_URL'],
      meaning:
        'Redis shared by replicas for tokens, the rate budget, the cache and the change feeds (`redis://`, or `rediss://` for TLS)',
      default: 'unset: each process keeps its own, in memory',
    },
    {
      settings: ['REDIS_PREFIX'],
      meaning: 'put before every Redis key and channel, so several gateways can share one Redis; only with `REDIS_URL`',
    },
    {
      settings: ['REDIS_FALLBACK_SHARE'],
      meaning:
        "while Redis is lost, the share of each licensee's budget this replica sends alone (`0.25` or a fraction like `1/3`; more than 0, at most 1): 1 divided by the number of replicas; only with `REDIS_URL`",
    },
  ],
  observability: [
    {
      settings: ['LOG_LEVEL'],
      meaning: 'pino level (`silent` … `trace`)',
    },
    {
      settings: ['OTEL_EXPORTER_OTLP_ENDPOINT'],
      meaning: 'OpenTelemetry collector (OTLP over HTTP, spans sent to `<endpoint>/v1/traces`)',
      default: 'unset: no traces',
    },
    {
      settings: ['OPS_PORT', 'OPS_HOST'],
      meaning:
        "where the operators' pages (`/metrics`, `/status`, `/status.json`) listen, a port of their own (as Apollo Router and node_exporter do); `/health` and `/ready` answer there too. The clients' port (`PORT`) answers 404 on those paths, whoever asks. `OPS_PORT` must differ from `PORT` (`0`: a free port, printed at start). Another exporter holding 9464 on the host stops the start with one line naming `OPS_PORT` (exit status 2): set another",
      default: "`9464` (the OpenTelemetry Prometheus exporter's port), `127.0.0.1`",
    },
    {
      settings: ['OPS_TOKEN'],
      meaning:
        "the token the operators' port requires (except for `/health` and `/ready`): `Authorization: Bearer <token>` (Prometheus: `authorization: { credentials: <token> }`), or the password of a browser's prompt (any user name); at least 16 printable characters; never shown. Required when `OPS_HOST` is not a loopback address (the gateway refuses to start without it, exit status 2)",
      default:
        'unset: none asked on a loopback `OPS_HOST` (only this machine reaches it, by one of its own names in `Host`)',
    },
    {
      settings: ['OPERATION_NAMES'],
      meaning:
        'operation names (comma-separated) counted under their own name in `gateway_graphql_operations_total`, beside those of the trusted documents; any other name counts as `other`',
    },
  ],
};

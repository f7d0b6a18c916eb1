import { z } from 'zod';
import { PACKAGE } from '../package-info.ts';
import { type Licensee, readLicenseesFile } from './licensees.ts';
import { type CachedType, parseTtls } from './response-cache-ttls.ts';
import { isTimeZone } from './time-zone.ts';
import { readTrustedDocuments, type TrustedDocuments } from './trusted-documents.ts';

/** The environment → one validated Config. The only reader of process.env. */

const VERSION = PACKAGE.version;

const int = (min: number, max: number) =>
  z.coerce
    .number('must be a number')
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

/** An origin as browsers send it in the Origin header: scheme, host and port, nothing else. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

/** An allow-list entry of outbound addresses: an http(s) URL with no credentials, query or fragment. */
function isAddressPrefix(value: string): boolean {
  try {
    const url = new URL(value);
    return (
      (url.protocol === 'https:' || url.protocol === 'http:') &&
      !url.username &&
      !url.password &&
      !url.search &&
      !url.hash
    );
  } catch {
    return false;
  }
}

/** A JWKS is fetched over https, or over http from this machine only (a local identity provider, tests). */
function isJwksUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url.hostname));
  } catch {
    return false;
  }
}

/** Whether a host name or address is this machine's own (a loopback address, or localhost). */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A host name as a Host header carries it, without the port: a DNS name, an IPv4 address or a bracketed IPv6 one. */
const HOST_NAME =
  /^(?:\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*)$/;

/** The names a Host header may carry for a gateway on a loopback address (HOST itself added when it is another one). */
function loopbackHosts(host: string): string[] {
  const own = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return [...new Set(['localhost', '127.0.0.1', '[::1]', own.toLowerCase()])];
}

/** A comma-separated list, each entry trimmed, empty ones dropped. */
const list = () =>
  z.string().transform((text) =>
    text
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean),
  );

const MIB = 1024 * 1024;

/** Settings whose values are never shown in an error (a Redis URL may hold a password). */
const SECRET_SETTINGS = new Set([
  'UPSTREAM_KEY',
  'JWT_SECRET',
  'REDIS_URL',
  'OPS_TOKEN',
  'ROUTER_HMAC_SECRET',
  'WEBHOOK_SECRET_KEY',
]);

/** redis:// or rediss:// (TLS) with a host; a password, user and database number may be in it. */
function isRedisUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** A share like 0.25 or a fraction like 1/3. */
function parseShare(text: string): number {
  const fraction = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  return fraction ? Number(fraction[1]) / Number(fraction[2]) : Number(text);
}

const envSchema = z.object({
  PORT: int(0, 65_535).default(4000),
  HOST: z.string().min(1).default('127.0.0.1'),
  // The operators' pages' own listener: 9464 is the OpenTelemetry Prometheus exporter's port.
  OPS_PORT: int(0, 65_535).default(9464),
  // Default: this machine only (see crossProblems for another address).
  OPS_HOST: z.string().min(1).default('127.0.0.1'),
  UPSTREAM_BASE_URL: z.url('must be an http(s) URL like https://service.example.com').optional(),
  UPSTREAM_KEY: z.string().min(1, 'must not be empty').optional(),
  UPSTREAM_SYSTEM_IDENTIFIER: z.string().regex(/^\d+$/, 'must be the licensee number').optional(),
  LICENSEES_FILE: z.string().min(1).optional(),
  TRUSTED_DOCUMENTS_FILE: z.string().min(1).optional(),
  UPSTREAM_RATE_LIMIT: int(1, 100_000).default(240),
  UPSTREAM_RATE_WINDOW_MS: int(100, 3_600_000).default(60_000),
  UPSTREAM_RATE_MARGIN: z.coerce
    .number('must be a number')
    .min(0, 'must be at least 0')
    .max(0.5, 'must be at most 0.5')
    .default(0.05),
  UPSTREAM_TIMEZONE: z.string().refine(isTimeZone, 'must be an IANA time zone like America/New_York').default('UTC'),
  UPSTREAM_USER_AGENT: z.string().min(1).default(`reservation-gateway/${VERSION}`),
  UPSTREAM_TIMEOUT_MS: int(100, 300_000).default(10_000),
  UPSTREAM_DEADLINE_MS: int(100, 600_000).default(15_000),
  QUERY_MAX_UPSTREAM_CALLS: int(1, 100_000).default(120),
  // Apollo Router's subgraph batching and clients' batch links send a handful at a time.
  MAX_BATCH_OPERATIONS: int(1, 100).default(10),
  // Unset: an eighth of the container's memory (src/operations/bulkhead.ts).
  MAX_INFLIGHT_BYTES: int(1024 * 1024, Number.MAX_SAFE_INTEGER).optional(),
  MAX_INFLIGHT_WAIT_MS: int(0, 600_000).default(10_000),
  // Seconds, not minutes: a reservation made upstream shows within this long.
  UPSTREAM_PAGE_TTL_MS: int(0, 60_000).default(5_000),
  // Ten minutes: a list that old, marked as such, is still worth more to a user than RATE_LIMITED.
  UPSTREAM_STALE_MAX_MS: int(0, 86_400_000).default(600_000),
  // Defaults pass every operation in test/documents (depth 9, 425 tokens) and GraphiQL's
  // introspection (184 tokens; depth is not counted under __schema).
  QUERY_MAX_DEPTH: int(1, 100).default(12),
  QUERY_MAX_ALIASES: int(0, 1000).default(30),
  QUERY_MAX_DIRECTIVES: int(0, 1000).default(50),
  // graphql-js parses and validates recursively: an unclosed `[[[[…` of 2000 tokens already
  // overflows the stack inside Yoga, so the token limit (counted while parsing) stays well below.
  QUERY_MAX_TOKENS: int(10, 1200).default(1000),
  // Comments and whitespace count: the token limit does not see them, and parsing holds the whole text.
  QUERY_MAX_BYTES: int(256, 16 * MIB).default(65_536),
  // Yoga's own default is 25 MB, and ws reads 100 MiB frames before the socket is authenticated.
  MAX_REQUEST_BYTES: int(1024, 64 * MIB).default(MIB),
  // Variables, extensions and the rest of a body, measured before anything reads them: walkers
  // later on (coercion, cache keys) recurse, and overflowed the stack at 5000 levels. Real input
  // nests a few levels; at most 1000 keeps every later walk far from the stack's end.
  MAX_INPUT_DEPTH: int(1, 1000).default(64),
  // Values (members and elements) one request may carry. The largest real input is a router's
  // `_entities` for a page of 5000 references (20,001 values); a 1 MiB body holds up to 500,000.
  MAX_INPUT_NODES: int(100, 1_000_000).default(50_000),
  // Node's defaults (60 s for the headers, 300 s for the request) let slow clients hold sockets for minutes.
  HTTP_HEADERS_TIMEOUT_MS: int(1000, 120_000).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: int(1000, 600_000).default(30_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(1000, 120_000).default(5_000),
  MAX_CONNECTIONS: int(1, 1_000_000).default(1024),
  // Default: the loopback names with a loopback HOST; required otherwise (see crossProblems).
  ALLOWED_HOSTS: list()
    .transform((hosts) => hosts.map((host) => host.toLowerCase()))
    .pipe(
      z.array(
        z
          .string()
          .regex(
            HOST_NAME,
            'each must be a host name like api.example.com, 10.0.0.5 or [::1], without a port or scheme',
          ),
      ),
    )
    .optional(),
  GATEWAY_AUTH_NONE_ON_PUBLIC_HOST: z.enum(['yes', 'no'], 'must be yes or no').default('no'),
  // Sent in an Authorization header: printable ASCII without spaces.
  OPS_TOKEN: z
    .string()
    .regex(
      /^[\x21-\x7e]{16,}$/,
      'must be at least 16 printable characters without spaces (for example the output of openssl rand -hex 32)',
    )
    .optional(),
  // The secret Hive Gateway's `hmacSignature` signs subgraph requests with.
  ROUTER_HMAC_SECRET: z
    .string()
    .min(32, 'must be at least 32 characters (for example the output of openssl rand -hex 32)')
    .optional(),
  OPERATION_NAMES: list()
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^[_A-Za-z][_0-9A-Za-z]{0,63}$/,
            'each must be a GraphQL operation name (letters, digits, _; at most 64)',
          ),
      ),
    )
    .default([]),
  // Default: on with a loopback HOST, off otherwise.
  GRAPHIQL: z.enum(['on', 'off'], 'must be on or off').optional(),
  CORS_ORIGINS: list()
    .pipe(
      z.array(
        z.string().refine(isOrigin, 'each must be an origin like https://app.example.com (scheme, host and port only)'),
      ),
    )
    .default([]),
  REDIS_URL: z
    .string()
    .refine(isRedisUrl, 'must be a redis:// or rediss:// URL like redis://:password@redis.internal:6379/0')
    .optional(),
  REDIS_PREFIX: z
    .string()
    .regex(/^[\w:.-]{1,64}$/, 'must be 1 to 64 letters, digits or _ : . -')
    .default('rgw:'),
  // Each replica's own share of the budget while Redis is away: 1/3 suits three replicas.
  REDIS_FALLBACK_SHARE: z
    .string()
    .transform(parseShare)
    .pipe(z.number('must be a number or a fraction like 1/3').gt(0, 'must be more than 0').max(1, 'must be at most 1'))
    .default(1 / 3),
  // Default: api-key with LICENSEES_FILE, none without (see authMode).
  GATEWAY_AUTH: z.enum(['none', 'api-key', 'jwt'], 'must be none, api-key or jwt').optional(),
  // RFC 7518 section 3.2: an HS256 key has at least 256 bits.
  JWT_SECRET: z
    .string()
    .refine(
      (secret) => Buffer.byteLength(secret, 'utf8') >= 32,
      'must be at least 32 bytes (for example the output of openssl rand -base64 32)',
    )
    .optional(),
  JWT_JWKS_URL: z
    .url('must be an https URL')
    .refine(isJwksUrl, 'must be an https URL (http only on a loopback address)')
    .optional(),
  JWT_ISSUER: z.string().min(1).optional(),
  JWT_AUDIENCE: z.string().min(1).optional(),
  JWT_LICENSEE_CLAIM: z.string().min(1).default('licensee'),
  CHANGES_POLL_INTERVAL_MS: int(100, 3_600_000).default(15_000),
  SUBSCRIPTIONS_PER_CLIENT: int(1, 10_000).default(20),
  // Under the 60 s idle timeout of common proxies and load balancers, with room for a late tick.
  SUBSCRIPTION_KEEPALIVE_MS: int(1_000, 50_000).default(20_000),
  // Unset: callback subscriptions are refused (a router names the address the gateway then calls).
  SUBSCRIPTION_CALLBACK_URLS: list()
    .pipe(
      z.array(
        z
          .string()
          .refine(isAddressPrefix, 'each must be an http(s) URL prefix like https://router.internal:4000/callback'),
      ),
    )
    .default([]),
  // Local development only: receivers on these hosts may be called over plain HTTP, at any address.
  WEBHOOK_ALLOW_HTTP_HOSTS: list()
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^[A-Za-z0-9.-]+$|^\[[0-9A-Fa-f:.]+\]$/,
            'each must be a host name or address like localhost or 127.0.0.1',
          ),
      ),
    )
    .default([]),
  WEBHOOK_DISABLE_AFTER_HOURS: int(1, 8_760).default(72),
  WEBHOOK_TIMEOUT_MS: int(100, 120_000).default(15_000),
  // AES-256-GCM keys sealing endpoint secrets in Redis: the first seals, each opens (a key change).
  WEBHOOK_SECRET_KEY: list()
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^[0-9a-fA-F]{64}$/,
            'each must be 64 hex digits, a 256-bit key (for example the output of openssl rand -hex 32)',
          ),
      ),
    )
    .default([]),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url('must be an http(s) URL like http://127.0.0.1:4318').optional(),
  GRAPHQL_JIT: z.enum(['on', 'off'], 'must be on or off').default('on'),
  RESPONSE_CACHE: z.enum(['on', 'off'], 'must be on or off').default('on'),
  // Checked by parseTtls with the other settings' problems (see loadConfig).
  RESPONSE_CACHE_TTLS: z.string().optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

/**
 * Every variable the settings accept, by name (the licensees' upstream keys are named by each
 * entry's `keyEnv` in LICENSEES_FILE instead). The manifests under deploy/ are checked against it.
 */
export const SETTINGS: readonly string[] = Object.keys(envSchema.shape);

/** Each setting's schema, for scripts/print-settings.ts (docs/settings.md: defaults and allowed values). */
export const SETTING_SCHEMAS = envSchema.shape;
export type SettingName = keyof typeof SETTING_SCHEMAS;

/**
 * Rules between settings, checked on the raw values so that they are reported together with
 * every other bad value (zod skips an object's refinements once a field has failed).
 */
function crossProblems(env: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  const problem = (name: string, message: string) => problems.push(`${name}: ${message}`);
  if (env.LICENSEES_FILE) {
    // Each licensee's credentials come from the file: a second source would be ignored.
    for (const name of ['UPSTREAM_KEY', 'UPSTREAM_SYSTEM_IDENTIFIER']) {
      if (env[name])
        problem(
          name,
          'is not used with LICENSEES_FILE (each licensee has its systemIdentifier and keyEnv there): unset it',
        );
    }
  } else if (env.UPSTREAM_BASE_URL && (!env.UPSTREAM_KEY || !env.UPSTREAM_SYSTEM_IDENTIFIER)) {
    problem(
      'UPSTREAM_KEY',
      'UPSTREAM_KEY and UPSTREAM_SYSTEM_IDENTIFIER are required with UPSTREAM_BASE_URL (or LICENSEES_FILE)',
    );
  }
  if (!env.REDIS_URL) {
    for (const name of ['REDIS_PREFIX', 'REDIS_FALLBACK_SHARE'])
      if (env[name]) problem(name, 'is only used with REDIS_URL: set REDIS_URL or unset it');
  }
  const host = env.HOST ?? '127.0.0.1';
  if (!isLoopback(host) && !env.ALLOWED_HOSTS) {
    const why = 'requests for other names are refused, against DNS rebinding';
    problem(
      'ALLOWED_HOSTS',
      `is required when HOST is not a loopback address (HOST=${host}): the host names clients reach the gateway by, comma-separated, like api.example.com (${why})`,
    );
  }
  const opsHost = env.OPS_HOST ?? '127.0.0.1';
  // Off this machine the listener's address proves nothing about who connects: only the token does.
  if (!isLoopback(opsHost) && !env.OPS_TOKEN)
    problem(
      'OPS_TOKEN',
      `is required when OPS_HOST is not a loopback address (OPS_HOST=${opsHost}): /metrics, /status and /status.json would answer anyone who reaches it; set OPS_TOKEN (for example to the output of openssl rand -hex 32), or listen on OPS_HOST=127.0.0.1`,
    );
  const port = Number(env.PORT ?? 4000);
  const opsPort = Number(env.OPS_PORT ?? 9464);
  // Port 0 picks a free port for each listener: two zeros are two ports.
  if (opsPort !== 0 && opsPort === port)
    problem(
      'OPS_PORT',
      `must differ from PORT (both are ${port}): the operators' pages have a listener of their own, never the clients' one`,
    );
  const headersMs = Number(env.HTTP_HEADERS_TIMEOUT_MS ?? 10_000);
  const requestMs = Number(env.HTTP_REQUEST_TIMEOUT_MS ?? 30_000);
  // Node refuses to start a server whose headers may take longer than the whole request.
  if (headersMs > requestMs)
    problem('HTTP_HEADERS_TIMEOUT_MS', `must not be more than HTTP_REQUEST_TIMEOUT_MS (${requestMs})`);
  const mode = authMode(env);
  if (!mode) return problems; // an unknown GATEWAY_AUTH is reported by the schema
  if (mode === 'none' && !isLoopback(host) && env.GATEWAY_AUTH_NONE_ON_PUBLIC_HOST !== 'yes') {
    const instead =
      'use api-key or jwt (with LICENSEES_FILE), listen on 127.0.0.1, or set ' +
      'GATEWAY_AUTH_NONE_ON_PUBLIC_HOST=yes when a proxy in front of the gateway authenticates every ' +
      'client';
    problem(
      'GATEWAY_AUTH',
      `none on HOST=${host} (not a loopback address) lets anyone who reaches it act for the licensee: ${instead}`,
    );
  }
  if (mode !== 'none' && env.GATEWAY_AUTH_NONE_ON_PUBLIC_HOST === 'yes')
    problem('GATEWAY_AUTH_NONE_ON_PUBLIC_HOST', `is only used with GATEWAY_AUTH=none (it is ${mode})`);
  if (mode !== 'none' && !env.LICENSEES_FILE) {
    problem(
      'GATEWAY_AUTH',
      `${mode} needs LICENSEES_FILE (the licensees${mode === 'api-key' ? ' and their clients' : ''}); without it only none is possible`,
    );
  }
  if (mode === 'jwt') {
    if (Boolean(env.JWT_SECRET) === Boolean(env.JWT_JWKS_URL))
      problem('JWT_SECRET', 'GATEWAY_AUTH=jwt needs exactly one of JWT_SECRET (HS256) and JWT_JWKS_URL (RS256, ES256)');
    if (!env.JWT_ISSUER) problem('JWT_ISSUER', 'is required with GATEWAY_AUTH=jwt (the iss every token must carry)');
    if (!env.JWT_AUDIENCE)
      problem('JWT_AUDIENCE', 'is required with GATEWAY_AUTH=jwt (the aud every token must carry)');
  } else {
    for (const name of ['JWT_SECRET', 'JWT_JWKS_URL', 'JWT_ISSUER', 'JWT_AUDIENCE', 'JWT_LICENSEE_CLAIM']) {
      if (env[name]) problem(name, `is only used with GATEWAY_AUTH=jwt (it is ${mode})`);
    }
  }
  return problems;
}

type AuthMode = 'none' | 'api-key' | 'jwt';

const AUTH_MODES: readonly AuthMode[] = ['none', 'api-key', 'jwt'];

/** GATEWAY_AUTH, or its default: api-key with LICENSEES_FILE, none without; undefined when unknown. */
function authMode(env: { GATEWAY_AUTH?: string; LICENSEES_FILE?: string }): AuthMode | undefined {
  if (!env.GATEWAY_AUTH) return env.LICENSEES_FILE ? 'api-key' : 'none';
  return AUTH_MODES.find((mode) => mode === env.GATEWAY_AUTH);
}

/** How clients prove who they are (GATEWAY_AUTH). */
export type AuthSettings =
  | { mode: 'none' }
  | { mode: 'api-key' }
  | {
      mode: 'jwt';
      /** HS256 with a shared secret, or RS256/ES256 with the keys of a JWKS. */
      verify: { secret: string } | { jwksUrl: string };
      issuer: string;
      audience: string;
      /** The claim naming the licensee's id. */
      licenseeClaim: string;
    };

export interface Config {
  port: number;
  host: string;
  /** Unset: the gateway starts the emulator in-process with its demo data. */
  upstreamBaseUrl?: string;
  /** Every licensee served; exactly one without LICENSEES_FILE. */
  licensees: Licensee[];
  auth: AuthSettings;
  upstream: {
    userAgent: string;
    timeoutMs: number;
    deadlineMs: number;
    rateLimit: number;
    rateWindowMs: number;
    rateMargin: number;
    pageTtlMs: number;
    staleMaxMs: number;
  };
  /** Operations estimated to need more upstream calls are refused with QUERY_TOO_COSTLY. */
  maxUpstreamCallsPerOperation: number;
  /** MAX_BATCH_OPERATIONS: operations one batched request (a JSON array) may hold; together held to maxUpstreamCallsPerOperation. */
  maxBatchOperations: number;
  /** Large operations' admission (src/operations/bulkhead.ts); maxBytes unset: derived from the container's memory. */
  inflight: { maxBytes?: number; maxWaitMs: number };
  /** Documents past these are refused before they run (see src/operations/query-limits.ts). */
  queryLimits: QueryLimits;
  /** MAX_INPUT_DEPTH and MAX_INPUT_NODES: variables, extensions and bodies past these are refused once parsed (src/http/input-bounds.ts). */
  inputBounds: InputBounds;
  /** TRUSTED_DOCUMENTS_FILE: when set, only these documents run, sent by their id. */
  trustedDocuments?: TrustedDocuments;
  /** The files read again when they change or on SIGHUP (licensees, trusted documents), by setting. */
  files: Partial<Record<ReloadableFile, string>>;
  /** REDIS_URL: tokens, budget and cache shared by replicas through Redis; unset, each process keeps its own. */
  redis?: { url: string; prefix: string; fallbackShare: number };
  /** Origins allowed to call the gateway from a browser page of another site; none by default. */
  corsOrigins: string[];
  /** RESPONSE_CACHE and RESPONSE_CACHE_TTLS: whole answers kept per licensee and client scopes (src/operations/response-cache). */
  responseCache: { enabled: boolean; ttls: Record<CachedType, number> };
  logLevel: string;
  /** How often each change feed polls the service (stretched while a licensee's budget is tight). */
  changesPollIntervalMs: number;
  /** SUBSCRIPTIONS_PER_CLIENT: live subscriptions one principal may hold (across replicas with REDIS_URL), and one socket. */
  subscriptionsPerClient: number;
  /** SUBSCRIPTION_KEEPALIVE_MS: how often an idle SSE stream gets a comment and a graphql-ws socket a ping. */
  subscriptionKeepAliveMs: number;
  /** SUBSCRIPTION_CALLBACK_URLS: the URL prefixes a router's callbacks may go to; none: callback subscriptions refused. */
  subscriptionCallbackUrls: string[];
  /** WEBHOOK_ALLOW_HTTP_HOSTS, WEBHOOK_DISABLE_AFTER_HOURS, WEBHOOK_SECRET_KEY and WEBHOOK_TIMEOUT_MS (docs/webhooks.md). */
  webhooks: { allowHttpHosts: string[]; disableAfterMs: number; secretKeys: string[]; timeoutMs: number };
  /** Where traces go (OTLP over HTTP); unset: no tracing. */
  otlpEndpoint?: string;
  /** GRAPHQL_JIT: documents are compiled with graphql-jit instead of interpreted by graphql-js. */
  graphqlJit: boolean;
  /** What a client may send and how long it may hold a connection (src/http/server.ts). */
  http: HttpLimits;
  /** ALLOWED_HOSTS: the names a request's Host (and a page's Origin, over WebSocket) may carry, lowercase, without port. */
  allowedHosts: string[];
  /** OPS_PORT and OPS_HOST: where /metrics, /status and /status.json (and the probes) are served; never on `port`. */
  opsPort: number;
  opsHost: string;
  /** OPS_HOST's names a request's Host may carry on the operators' port while OPS_TOKEN is unset (against DNS rebinding). */
  opsAllowedHosts: string[];
  /** OPS_TOKEN: the bearer token of the operators' pages; required off loopback, unset: none asked on a loopback OPS_HOST. */
  opsToken?: string;
  /** ROUTER_HMAC_SECRET: only operations signed with it (by the federation router) run; unset, any. */
  routerHmacSecret?: string;
  /** OPERATION_NAMES: operation names counted under their own name in the metrics (besides the trusted documents'). */
  operationNames: string[];
  /** GRAPHIQL: the GraphiQL page at /graphql for browsers. */
  graphiql: boolean;
  /** Settings that work but deserve a look (logged at start). */
  warnings: string[];
}

export interface HttpLimits {
  /** Request bodies and WebSocket messages larger than this are refused before they are read. */
  maxRequestBytes: number;
  headersTimeoutMs: number;
  /** Receiving the whole request, not answering it: streams outlive it. */
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
}

export interface QueryLimits {
  /** A document's length in UTF-8 bytes, comments included; checked before it is parsed. */
  bytes: number;
  depth: number;
  aliases: number;
  directives: number;
  tokens: number;
}

/** What the JSON of one request (variables, extensions, the rest of its body) may hold. */
export interface InputBounds {
  /** Containers inside containers, the outermost (the variables object) level 1. */
  depth: number;
  /** Values of the whole request, every member and element counted, containers included. */
  nodes: number;
}

/** The settings naming a file the gateway reads again without a restart (docs/operating.md, "Reloads"). */
export type ReloadableFile = 'LICENSEES_FILE' | 'TRUSTED_DOCUMENTS_FILE';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads the settings of docs/settings.md; every bad value is named in one error. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  const problems = parsed.success
    ? []
    : parsed.error.issues.map((i) => {
        const name = String(i.path[0] ?? 'environment');
        // Never echo a credential back.
        const shown =
          SECRET_SETTINGS.has(name) || present[name] === undefined ? '' : ` (got ${JSON.stringify(present[name])})`;
        return `${name}: ${i.message}${shown}`;
      });
  problems.push(...crossProblems(present));
  const e = parsed.success ? parsed.data : undefined;
  const tenants = licenseesOf(present, e);
  problems.push(...tenants.problems);
  const trusted = present.TRUSTED_DOCUMENTS_FILE ? readTrustedDocuments(present.TRUSTED_DOCUMENTS_FILE) : undefined;
  problems.push(...(trusted?.problems ?? []).map((problem) => `TRUSTED_DOCUMENTS_FILE ${problem}`));
  const cacheTtls = parseTtls(present.RESPONSE_CACHE_TTLS ?? '');
  problems.push(...cacheTtls.problems.map((problem) => `RESPONSE_CACHE_TTLS: ${problem}`));
  if (!e || problems.length > 0)
    throw new ConfigError(`invalid settings:\n${problems.map((line) => `  ${line}`).join('\n')}`);
  const auth = authSettings(e);
  return {
    port: e.PORT,
    host: e.HOST,
    upstreamBaseUrl: e.UPSTREAM_BASE_URL,
    licensees: tenants.licensees,
    auth,
    upstream: {
      userAgent: e.UPSTREAM_USER_AGENT,
      timeoutMs: e.UPSTREAM_TIMEOUT_MS,
      deadlineMs: e.UPSTREAM_DEADLINE_MS,
      rateLimit: e.UPSTREAM_RATE_LIMIT,
      rateWindowMs: e.UPSTREAM_RATE_WINDOW_MS,
      rateMargin: e.UPSTREAM_RATE_MARGIN,
      pageTtlMs: e.UPSTREAM_PAGE_TTL_MS,
      staleMaxMs: e.UPSTREAM_STALE_MAX_MS,
    },
    maxUpstreamCallsPerOperation: e.QUERY_MAX_UPSTREAM_CALLS,
    maxBatchOperations: e.MAX_BATCH_OPERATIONS,
    inflight: { maxBytes: e.MAX_INFLIGHT_BYTES, maxWaitMs: e.MAX_INFLIGHT_WAIT_MS },
    queryLimits: {
      bytes: e.QUERY_MAX_BYTES,
      depth: e.QUERY_MAX_DEPTH,
      aliases: e.QUERY_MAX_ALIASES,
      directives: e.QUERY_MAX_DIRECTIVES,
      tokens: e.QUERY_MAX_TOKENS,
    },
    inputBounds: { depth: e.MAX_INPUT_DEPTH, nodes: e.MAX_INPUT_NODES },
    ...(trusted ? { trustedDocuments: trusted.documents } : {}),
    files: {
      ...(e.LICENSEES_FILE ? { LICENSEES_FILE: e.LICENSEES_FILE } : {}),
      ...(e.TRUSTED_DOCUMENTS_FILE ? { TRUSTED_DOCUMENTS_FILE: e.TRUSTED_DOCUMENTS_FILE } : {}),
    },
    ...(e.REDIS_URL
      ? { redis: { url: e.REDIS_URL, prefix: e.REDIS_PREFIX, fallbackShare: e.REDIS_FALLBACK_SHARE } }
      : {}),
    corsOrigins: e.CORS_ORIGINS,
    responseCache: { enabled: e.RESPONSE_CACHE === 'on', ttls: cacheTtls.ttls },
    logLevel: e.LOG_LEVEL,
    changesPollIntervalMs: e.CHANGES_POLL_INTERVAL_MS,
    subscriptionsPerClient: e.SUBSCRIPTIONS_PER_CLIENT,
    subscriptionKeepAliveMs: e.SUBSCRIPTION_KEEPALIVE_MS,
    subscriptionCallbackUrls: e.SUBSCRIPTION_CALLBACK_URLS,
    webhooks: {
      allowHttpHosts: e.WEBHOOK_ALLOW_HTTP_HOSTS.map((host) => host.toLowerCase()),
      disableAfterMs: e.WEBHOOK_DISABLE_AFTER_HOURS * 3_600_000,
      secretKeys: e.WEBHOOK_SECRET_KEY,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    },
    ...(e.OTEL_EXPORTER_OTLP_ENDPOINT ? { otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT } : {}),
    graphqlJit: e.GRAPHQL_JIT === 'on',
    http: {
      maxRequestBytes: e.MAX_REQUEST_BYTES,
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: e.MAX_CONNECTIONS,
    },
    // Required by crossProblems when HOST is not a loopback address.
    allowedHosts: e.ALLOWED_HOSTS ?? loopbackHosts(e.HOST),
    opsPort: e.OPS_PORT,
    opsHost: e.OPS_HOST,
    opsAllowedHosts: loopbackHosts(e.OPS_HOST),
    ...(e.OPS_TOKEN ? { opsToken: e.OPS_TOKEN } : {}),
    ...(e.ROUTER_HMAC_SECRET ? { routerHmacSecret: e.ROUTER_HMAC_SECRET } : {}),
    operationNames: e.OPERATION_NAMES,
    graphiql: (e.GRAPHIQL ?? (isLoopback(e.HOST) ? 'on' : 'off')) === 'on',
    warnings: [
      ...tenants.warnings,
      ...(auth.mode === 'none' && !isLoopback(e.HOST)
        ? [
            `GATEWAY_AUTH=none on HOST ${e.HOST} (GATEWAY_AUTH_NONE_ON_PUBLIC_HOST=yes): anyone who reaches this address acts for licensee ${tenants.licensees[0]?.id} unless a proxy in front authenticates them`,
          ]
        : []),
    ],
  };
}

type Env = z.output<typeof envSchema>;

/** The licensees of LICENSEES_FILE, or the one of the UPSTREAM_* settings (the emulator's 1001 without them). */
function licenseesOf(
  present: Record<string, string | undefined>,
  e: Env | undefined,
): { licensees: Licensee[]; problems: string[]; warnings: string[] } {
  const defaults = { timeZone: e?.UPSTREAM_TIMEZONE ?? 'UTC', rateLimit: e?.UPSTREAM_RATE_LIMIT ?? 240 };
  const path = present.LICENSEES_FILE;
  if (!path) {
    const id = e?.UPSTREAM_SYSTEM_IDENTIFIER ?? '1001';
    const account = { systemIdentifier: id, key: e?.UPSTREAM_KEY ?? 'demo-key-1001', timeZone: defaults.timeZone };
    return { licensees: [{ id, account, rateLimit: defaults.rateLimit, clients: [] }], problems: [], warnings: [] };
  }
  const reading = readLicenseesFile(path, present, defaults);
  const problems = reading.problems.map((problem) => `LICENSEES_FILE ${problem}`);
  if (e && problems.length === 0) {
    const mode = authMode(e)!;
    if (mode === 'none' && reading.licensees.length > 1) {
      problems.push(`GATEWAY_AUTH: none cannot tell ${reading.licensees.length} licensees apart; use api-key or jwt`);
    }
    if (mode === 'api-key' && reading.licensees.every((licensee) => licensee.clients.length === 0)) {
      problems.push(
        'LICENSEES_FILE: GATEWAY_AUTH=api-key needs at least one client (name, apiKeySha256, scopes) in some licensee',
      );
    }
  }
  return { ...reading, problems };
}

function authSettings(e: Env): AuthSettings {
  const mode = authMode(e)!;
  if (mode !== 'jwt') return { mode };
  return {
    mode,
    verify: e.JWT_SECRET ? { secret: e.JWT_SECRET } : { jwksUrl: e.JWT_JWKS_URL! },
    issuer: e.JWT_ISSUER!,
    audience: e.JWT_AUDIENCE!,
    licenseeClaim: e.JWT_LICENSEE_CLAIM,
  };
}

import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { isTimeZone } from './upstream/formats.ts';

/** The environment → one validated Config. The only reader of process.env. */

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

const int = (min: number, max: number) => z.coerce.number('must be a number').int('must be a whole number').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);

/** An origin as browsers send it in the Origin header: scheme, host and port, nothing else. */
function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}

/** Settings of the architecture that later issues build: refused rather than silently ignored. */
const notYet = () => z.string().refine(() => false, 'is not supported by this version of the gateway yet').optional();

const envSchema = z
  .object({
    PORT: int(0, 65_535).default(4000),
    HOST: z.string().min(1).default('127.0.0.1'),
    UPSTREAM_BASE_URL: z.url('must be an http(s) URL like https://service.example.com').optional(),
    UPSTREAM_KEY: z.string().min(1, 'must not be empty').optional(),
    UPSTREAM_SYSTEM_IDENTIFIER: z.string().regex(/^\d+$/, 'must be the licensee number').optional(),
    LICENSEES_FILE: notYet(),
    UPSTREAM_RATE_LIMIT: int(1, 100_000).default(240),
    UPSTREAM_RATE_WINDOW_MS: int(100, 3_600_000).default(60_000),
    UPSTREAM_RATE_MARGIN: z.coerce.number('must be a number').min(0, 'must be at least 0').max(0.5, 'must be at most 0.5').default(0.05),
    UPSTREAM_TIMEZONE: z.string().refine(isTimeZone, 'must be an IANA time zone like America/New_York').default('UTC'),
    UPSTREAM_USER_AGENT: z.string().min(1).default(`reservation-gateway/${VERSION}`),
    UPSTREAM_TIMEOUT_MS: int(100, 300_000).default(10_000),
    UPSTREAM_DEADLINE_MS: int(100, 600_000).default(15_000),
    QUERY_MAX_UPSTREAM_CALLS: int(1, 100_000).default(120),
    // Defaults pass every operation in test/operations (depth 9, 425 tokens) and GraphiQL's
    // introspection (184 tokens; depth is not counted under __schema).
    QUERY_MAX_DEPTH: int(1, 100).default(12),
    QUERY_MAX_ALIASES: int(0, 1000).default(30),
    QUERY_MAX_DIRECTIVES: int(0, 1000).default(50),
    // graphql-js parses and validates recursively: an unclosed `[[[[…` of 2000 tokens already
    // overflows the stack inside Yoga, so the token limit (counted while parsing) stays well below.
    QUERY_MAX_TOKENS: int(10, 1200).default(1000),
    CORS_ORIGINS: z
      .string()
      .transform((list) => list.split(',').map((origin) => origin.trim()).filter(Boolean))
      .pipe(z.array(z.string().refine(isOrigin, 'each must be an origin like https://app.example.com (scheme, host and port only)')))
      .default([]),
    REDIS_URL: notYet(),
    GATEWAY_AUTH: z
      .enum(['none', 'api-key', 'jwt'])
      .refine((v) => v === 'none', 'only "none" is supported by this version of the gateway yet')
      .default('none'),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .superRefine((env, ctx) => {
    if (env.UPSTREAM_BASE_URL && (!env.UPSTREAM_KEY || !env.UPSTREAM_SYSTEM_IDENTIFIER)) {
      ctx.addIssue({ code: 'custom', path: ['UPSTREAM_KEY'], message: 'UPSTREAM_KEY and UPSTREAM_SYSTEM_IDENTIFIER are required with UPSTREAM_BASE_URL' });
    }
  });

export interface Config {
  port: number;
  host: string;
  /** Unset: the gateway starts the emulator in-process with its demo data. */
  upstreamBaseUrl?: string;
  licensee: { id: string; key: string; timeZone: string };
  upstream: { userAgent: string; timeoutMs: number; deadlineMs: number; rateLimit: number; rateWindowMs: number; rateMargin: number };
  /** Operations estimated to need more upstream calls are refused with QUERY_TOO_COSTLY. */
  maxUpstreamCallsPerOperation: number;
  /** Documents past these are refused before they run (see src/query-limits.ts). */
  queryLimits: QueryLimits;
  /** Origins allowed to call the gateway from a browser page of another site; none by default. */
  corsOrigins: string[];
  logLevel: string;
}

export interface QueryLimits {
  depth: number;
  aliases: number;
  directives: number;
  tokens: number;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads the settings of ../shared/docs/architecture.md; every bad value is named in one error. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const name = String(i.path[0] ?? 'environment');
      // Never echo a credential back.
      const shown = name === 'UPSTREAM_KEY' || present[name] === undefined ? '' : ` (got ${JSON.stringify(present[name])})`;
      return `  ${name}: ${i.message}${shown}`;
    });
    throw new ConfigError(`invalid settings:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    upstreamBaseUrl: e.UPSTREAM_BASE_URL,
    // Without an upstream the embedded emulator's first demo licensee is used.
    licensee: {
      id: e.UPSTREAM_SYSTEM_IDENTIFIER ?? '1001',
      key: e.UPSTREAM_KEY ?? 'demo-key-1001',
      timeZone: e.UPSTREAM_TIMEZONE,
    },
    upstream: {
      userAgent: e.UPSTREAM_USER_AGENT,
      timeoutMs: e.UPSTREAM_TIMEOUT_MS,
      deadlineMs: e.UPSTREAM_DEADLINE_MS,
      rateLimit: e.UPSTREAM_RATE_LIMIT,
      rateWindowMs: e.UPSTREAM_RATE_WINDOW_MS,
      rateMargin: e.UPSTREAM_RATE_MARGIN,
    },
    maxUpstreamCallsPerOperation: e.QUERY_MAX_UPSTREAM_CALLS,
    queryLimits: { depth: e.QUERY_MAX_DEPTH, aliases: e.QUERY_MAX_ALIASES, directives: e.QUERY_MAX_DIRECTIVES, tokens: e.QUERY_MAX_TOKENS },
    corsOrigins: e.CORS_ORIGINS,
    logLevel: e.LOG_LEVEL,
  };
}

import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { isTimeZone } from './time-zone.ts';

/**
 * LICENSEES_FILE: the licensees the gateway serves and the clients allowed to use each. Read once
 * at start; every bad entry is reported, none is echoed with its key or digest.
 */

/**
 * What a client may do: `read` runs queries and subscriptions, `write` runs mutations,
 * `webhooks:manage` registers and manages its licensee's webhook endpoints (and only that).
 * Granted here and in a JWT's claims (auth/jwt.ts); a principal carries them (auth/principal.ts).
 */
export type Scope = 'read' | 'write' | 'webhooks:manage';

export const SCOPES: readonly Scope[] = ['read', 'write', 'webhooks:manage'];

/**
 * The account at the service a licensee acts as: the upstream client takes it as its
 * `UpstreamAccount` (upstream/account.ts), which it is by shape, so neither layer imports the other.
 */
export interface LicenseeAccount {
  /** The licensee number, sent as systemIdentifier. */
  systemIdentifier: string;
  /** The key from the licensee's console. Read only by the token manager. */
  key: string;
  /** IANA zone of the licensee's wall-clock timestamps. */
  timeZone: string;
  /** Requests per rate window for this licensee; the client's UPSTREAM_RATE_LIMIT when absent. */
  rateLimit?: number;
}

/** A client allowed in with an API key (GATEWAY_AUTH=api-key). */
export interface LicenseeClient {
  name: string;
  /** Lowercase hex SHA-256 of the client key's UTF-8 text; the key itself is never stored. */
  apiKeySha256: string;
  scopes: readonly Scope[];
}

/** A licensee of the gateway: its own id, the upstream account it acts as, and its clients. */
export interface Licensee {
  /** The `id` of LICENSEES_FILE (clients and JWTs name it); the systemIdentifier without a file. */
  id: string;
  /** The account at the service it acts as: whose token, budget and cache upstream calls use. */
  account: LicenseeAccount;
  /** Upstream requests per rate window for this licensee. */
  rateLimit: number;
  clients: readonly LicenseeClient[];
}

export interface LicenseeDefaults {
  timeZone: string;
  rateLimit: number;
}

export interface LicenseesReading {
  licensees: Licensee[];
  /** What is wrong, one line an entry; empty when the file is good. */
  problems: string[];
  warnings: string[];
}

const clientSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, ".", "_" or "-"'),
  apiKeySha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, "must be the lowercase hex SHA-256 of the client's key (64 characters 0-9 a-f)"),
  scopes: z
    .array(z.enum(SCOPES, 'must be "read", "write" or "webhooks:manage"'))
    .min(1, 'must list "read", "write", "webhooks:manage" or several')
    .refine((scopes) => new Set(scopes).size === scopes.length, 'must not repeat a scope'),
});

const licenseeSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, ".", "_" or "-"'),
  systemIdentifier: z.string().regex(/^\d{1,18}$/, 'must be the licensee number as a string of digits, like "1001"'),
  keyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the name of an environment variable')
    .optional(),
  key: z.string().min(1, 'must not be empty').optional(),
  timezone: z.string().refine(isTimeZone, 'must be an IANA time zone like America/New_York').optional(),
  rateLimit: z.number('must be a number').int('must be a whole number').min(1, 'must be at least 1').optional(),
  clients: z.array(clientSchema).default([]),
});

const fileSchema = z.strictObject({ licensees: z.array(licenseeSchema).min(1, 'must list at least one licensee') });

type Path = (string | number)[];
interface Problem {
  path: Path;
  message: string;
}

/**
 * Rules across fields and entries, checked on the raw JSON so that they are reported with the
 * shape's own problems (zod skips an object's refinements once one of its fields failed).
 */
function crossEntryProblems(json: unknown, env: Record<string, string | undefined>): Problem[] {
  const licensees = entries((json as { licensees?: unknown } | null)?.licensees);
  const problems: Problem[] = [];
  licensees.forEach((entry, index) => {
    const { key, keyEnv } = entry as { key?: unknown; keyEnv?: unknown };
    const at = (field: string): Path => ['licensees', index, field];
    if (key !== undefined && keyEnv !== undefined)
      problems.push({ path: at('key'), message: 'give either keyEnv or key, not both' });
    else if (key === undefined && keyEnv === undefined)
      problems.push({ path: at('keyEnv'), message: 'is required (the environment variable holding the upstream key)' });
    else if (typeof keyEnv === 'string' && !env[keyEnv])
      problems.push({ path: at('keyEnv'), message: `names ${keyEnv}, which is not set` });
  });
  const repeated = (what: string, values: { value: unknown; path: Path }[]) => {
    const seen = new Set<unknown>();
    for (const { value, path } of values) {
      if (typeof value !== 'string') continue;
      if (seen.has(value)) problems.push({ path, message: `repeats ${what} of an earlier entry` });
      seen.add(value);
    }
  };
  const field = (name: string) =>
    licensees.map((entry, index) => ({
      value: (entry as Record<string, unknown>)[name],
      path: ['licensees', index, name],
    }));
  repeated('the id', field('id'));
  repeated('the systemIdentifier', field('systemIdentifier'));
  const clients = licensees.flatMap((entry, li) =>
    entries((entry as { clients?: unknown }).clients).map((client, ci) => ({
      client: client as Record<string, unknown>,
      path: ['licensees', li, 'clients', ci],
    })),
  );
  repeated(
    'the client name',
    clients.map(({ client, path }) => ({ value: client.name, path: [...path, 'name'] })),
  );
  // Two clients with one key could not be told apart: the first would win silently.
  repeated(
    'the apiKeySha256',
    clients.map(({ client, path }) => ({ value: client.apiKeySha256, path: [...path, 'apiKeySha256'] })),
  );
  return problems;
}

/** The objects of what should be an array of objects; anything else is the schema's to report. */
function entries(value: unknown): object[] {
  return Array.isArray(value)
    ? value.filter((entry): entry is object => entry !== null && typeof entry === 'object')
    : [];
}

/** Reads and checks the file at `path`; `env` resolves each licensee's keyEnv. */
export function readLicenseesFile(
  path: string,
  env: Record<string, string | undefined>,
  defaults: LicenseeDefaults,
): LicenseesReading {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return failed(`cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text around the fault, which may be a key: not shown.
    return failed(`${path} is not valid JSON`);
  }
  return parseLicensees(json, env, defaults);
}

/** Checks the file's content: every bad entry becomes one line of `problems`. */
export function parseLicensees(
  json: unknown,
  env: Record<string, string | undefined>,
  defaults: LicenseeDefaults,
): LicenseesReading {
  const parsed = fileSchema.safeParse(json);
  const problems = [...(parsed.success ? [] : parsed.error.issues), ...crossEntryProblems(json, env)];
  if (!parsed.success || problems.length > 0)
    return {
      licensees: [],
      problems: problems.map((problem) => `${describePath(problem.path, json)}: ${problem.message}`),
      warnings: [],
    };
  const warnings: string[] = [];
  const licensees = parsed.data.licensees.map((entry): Licensee => {
    if (entry.key !== undefined)
      warnings.push(
        `licensee "${entry.id}" has its upstream key written in LICENSEES_FILE ("key"): fine for local use, otherwise use keyEnv`,
      );
    const rateLimit = entry.rateLimit ?? defaults.rateLimit;
    return {
      id: entry.id,
      // The budget layer reads the limit from the call's licensee: each has a budget of its own size.
      account: {
        systemIdentifier: entry.systemIdentifier,
        key: entry.key ?? env[entry.keyEnv!]!,
        timeZone: entry.timezone ?? defaults.timeZone,
        rateLimit,
      },
      rateLimit,
      clients: entry.clients,
    };
  });
  return { licensees, problems: [], warnings };
}

function failed(problem: string): LicenseesReading {
  return { licensees: [], problems: [problem], warnings: [] };
}

/** `licensees[1] ("acme").clients[0].apiKeySha256`: the index and, where there is one, the licensee's id. */
function describePath(path: readonly PropertyKey[], json: unknown): string {
  let text = '';
  let node: unknown = json;
  path.forEach((part, depth) => {
    node = node !== null && typeof node === 'object' ? (node as Record<PropertyKey, unknown>)[part] : undefined;
    text += typeof part === 'number' ? `[${part}]` : `${text ? '.' : ''}${String(part)}`;
    const id = depth === 1 && node !== null && typeof node === 'object' ? (node as { id?: unknown }).id : undefined;
    if (typeof id === 'string') text += ` ("${id.slice(0, 64)}")`;
  });
  return text || '(the file)';
}

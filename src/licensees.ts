import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { SCOPES, type Scope } from './auth/principal.ts';
import { isTimeZone } from './upstream/formats.ts';
import type { Licensee } from './upstream/licensee.ts';

/**
 * LICENSEES_FILE: the licensees the gateway serves and the clients allowed to use each. Read once
 * at start; every bad entry is reported, none is echoed with its key or digest.
 */

/** A client allowed in with an API key (GATEWAY_AUTH=api-key). */
export interface LicenseeClient {
  name: string;
  /** Lowercase hex SHA-256 of the client key's UTF-8 text; the key itself is never stored. */
  apiKeySha256: string;
  scopes: readonly Scope[];
}

/** A licensee of the gateway: its own id, the upstream account it acts as, and its clients. */
export interface TenantLicensee {
  /** The `id` of LICENSEES_FILE (clients and JWTs name it); the systemIdentifier without a file. */
  id: string;
  /** Whose token, budget and cache upstream calls use; its `id` is the systemIdentifier. */
  upstream: Licensee;
  /** Upstream requests per rate window for this licensee. */
  rateLimit: number;
  clients: readonly LicenseeClient[];
}

export interface LicenseeDefaults {
  timeZone: string;
  rateLimit: number;
}

export interface LicenseesReading {
  licensees: TenantLicensee[];
  /** What is wrong, one line an entry; empty when the file is good. */
  problems: string[];
  warnings: string[];
}

const clientSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, ".", "_" or "-"'),
  apiKeySha256: z.string().regex(/^[0-9a-f]{64}$/, "must be the lowercase hex SHA-256 of the client's key (64 characters 0-9 a-f)"),
  scopes: z
    .array(z.enum(SCOPES, 'must be "read" or "write"'))
    .min(1, 'must list "read", "write" or both')
    .refine((scopes) => new Set(scopes).size === scopes.length, 'must not repeat a scope'),
});

function licenseeSchema(env: Record<string, string | undefined>) {
  return z
    .strictObject({
      id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 letters, digits, ".", "_" or "-"'),
      systemIdentifier: z.string().regex(/^\d{1,18}$/, 'must be the licensee number as a string of digits, like "1001"'),
      keyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the name of an environment variable').optional(),
      key: z.string().min(1, 'must not be empty').optional(),
      timezone: z.string().refine(isTimeZone, 'must be an IANA time zone like America/New_York').optional(),
      rateLimit: z.number('must be a number').int('must be a whole number').min(1, 'must be at least 1').optional(),
      clients: z.array(clientSchema).default([]),
    })
    .superRefine((entry, ctx) => {
      if (entry.key !== undefined && entry.keyEnv !== undefined) ctx.addIssue({ code: 'custom', path: ['key'], message: 'give either keyEnv or key, not both' });
      else if (entry.key === undefined && entry.keyEnv === undefined) ctx.addIssue({ code: 'custom', path: ['keyEnv'], message: 'is required (the environment variable holding the upstream key)' });
      else if (entry.keyEnv !== undefined && !env[entry.keyEnv]) ctx.addIssue({ code: 'custom', path: ['keyEnv'], message: `names ${entry.keyEnv}, which is not set` });
    });
}

function fileSchema(env: Record<string, string | undefined>) {
  return z
    .strictObject({ licensees: z.array(licenseeSchema(env)).min(1, 'must list at least one licensee') })
    .superRefine(({ licensees }, ctx) => {
      const repeated = (what: string, values: string[], path: (index: number) => (string | number)[]) => {
        const seen = new Set<string>();
        values.forEach((value, index) => {
          if (seen.has(value)) ctx.addIssue({ code: 'custom', path: path(index), message: `repeats ${what} of an earlier entry` });
          seen.add(value);
        });
      };
      repeated('the id', licensees.map((l) => l.id), (i) => ['licensees', i, 'id']);
      repeated('the systemIdentifier', licensees.map((l) => l.systemIdentifier), (i) => ['licensees', i, 'systemIdentifier']);
      const clients = licensees.flatMap((l, li) => l.clients.map((c, ci) => ({ ...c, path: ['licensees', li, 'clients', ci] })));
      repeated('the client name', clients.map((c) => c.name), (i) => [...clients[i]!.path, 'name']);
      // Two clients with one key could not be told apart: the first would win silently.
      repeated('the apiKeySha256', clients.map((c) => c.apiKeySha256), (i) => [...clients[i]!.path, 'apiKeySha256']);
    });
}

/** Reads and checks the file at `path`; `env` resolves each licensee's keyEnv. */
export function readLicenseesFile(path: string, env: Record<string, string | undefined>, defaults: LicenseeDefaults): LicenseesReading {
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
export function parseLicensees(json: unknown, env: Record<string, string | undefined>, defaults: LicenseeDefaults): LicenseesReading {
  const parsed = fileSchema(env).safeParse(json);
  if (!parsed.success) return { licensees: [], problems: parsed.error.issues.map((issue) => `${describePath(issue.path, json)}: ${issue.message}`), warnings: [] };
  const warnings: string[] = [];
  const licensees = parsed.data.licensees.map((entry): TenantLicensee => {
    if (entry.key !== undefined) warnings.push(`licensee "${entry.id}" has its upstream key written in LICENSEES_FILE ("key"): fine for local use, otherwise use keyEnv`);
    return {
      id: entry.id,
      upstream: { id: entry.systemIdentifier, key: entry.key ?? env[entry.keyEnv!]!, timeZone: entry.timezone ?? defaults.timeZone },
      rateLimit: entry.rateLimit ?? defaults.rateLimit,
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

import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/environment.ts';
import { createLogger, yogaLogging } from '../../src/observability/logger.ts';
import { LICENSEES_JSON, licenseesEnv, sha256 } from '../auth/licensees-fixture.ts';

describe('loadConfig', () => {
  it('defaults to the embedded emulator and its demo licensee', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 4000, host: '127.0.0.1', upstreamBaseUrl: undefined, auth: { mode: 'none' } });
    expect(c.licensees).toEqual([
      {
        id: '1001',
        account: { systemIdentifier: '1001', key: 'demo-key-1001', timeZone: 'UTC' },
        rateLimit: 240,
        clients: [],
      },
    ]);
    expect(c.upstream).toMatchObject({ rateLimit: 240, rateWindowMs: 60_000, rateMargin: 0.05, timeoutMs: 10_000 });
    expect(c.upstream.userAgent).toMatch(/^reservation-gateway\/\d+\.\d+\.\d+$/);
  });

  it('names every bad value at once, and never echoes the key', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        UPSTREAM_RATE_LIMIT: '0',
        UPSTREAM_RATE_MARGIN: '0.9',
        UPSTREAM_TIMEZONE: 'Mars/Olympus',
        UPSTREAM_BASE_URL: 'not a url',
        UPSTREAM_KEY: 'secret-key',
        LOG_LEVEL: 'loud',
        GATEWAY_AUTH: 'jwt',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of [
      'PORT',
      'UPSTREAM_RATE_LIMIT',
      'UPSTREAM_RATE_MARGIN',
      'UPSTREAM_TIMEZONE',
      'UPSTREAM_BASE_URL',
      'LOG_LEVEL',
      'GATEWAY_AUTH',
    ]) {
      expect(message).toContain(`${name}:`);
    }
    expect(message).toContain('"Mars/Olympus"');
    expect(message).not.toContain('secret-key');
  });

  it('reads the query limits and the CORS allow-list', () => {
    expect(loadConfig({}).queryLimits).toEqual({ bytes: 65_536, depth: 12, aliases: 30, directives: 50, tokens: 1000 });
    expect(loadConfig({}).corsOrigins).toEqual([]);
    const c = loadConfig({
      QUERY_MAX_DEPTH: '8',
      QUERY_MAX_TOKENS: '600',
      CORS_ORIGINS: 'https://app.example.com, http://localhost:3000',
    });
    expect(c.queryLimits).toMatchObject({ depth: 8, tokens: 600 });
    expect(c.corsOrigins).toEqual(['https://app.example.com', 'http://localhost:3000']);
    // Above 1200 tokens a document could nest deep enough to overflow graphql-js's parser.
    expect(() => loadConfig({ QUERY_MAX_TOKENS: '5000' })).toThrow(/QUERY_MAX_TOKENS: must be at most 1200/);
    expect(() => loadConfig({ CORS_ORIGINS: 'https://app.example.com/path' })).toThrow(
      /CORS_ORIGINS: each must be an origin/,
    );
    expect(() => loadConfig({ CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS/);
  });

  it('reads the change feeds’ interval and the traces’ endpoint; bad values are a ConfigError (issue 11)', () => {
    expect(loadConfig({}).changesPollIntervalMs).toBe(15_000);
    expect(loadConfig({}).otlpEndpoint).toBeUndefined();
    expect(
      loadConfig({ CHANGES_POLL_INTERVAL_MS: '1000', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }),
    ).toMatchObject({ changesPollIntervalMs: 1000, otlpEndpoint: 'http://127.0.0.1:4318' });
    expect(() => loadConfig({ CHANGES_POLL_INTERVAL_MS: 'often' })).toThrow(
      /CHANGES_POLL_INTERVAL_MS: must be a number/,
    );
    expect(() => loadConfig({ CHANGES_POLL_INTERVAL_MS: '0' })).toThrow(
      /CHANGES_POLL_INTERVAL_MS: must be at least 100/,
    );
    expect(() => loadConfig({ CHANGES_POLL_INTERVAL_MS: '1.5' })).toThrow(ConfigError);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http\(s\) URL/,
    );
  });

  it('requires credentials with an upstream', () => {
    expect(() => loadConfig({ UPSTREAM_BASE_URL: 'https://service.example.com' })).toThrow(
      /UPSTREAM_KEY and UPSTREAM_SYSTEM_IDENTIFIER are required/,
    );
    const c = loadConfig({
      UPSTREAM_BASE_URL: 'https://service.example.com',
      UPSTREAM_KEY: 'k',
      UPSTREAM_SYSTEM_IDENTIFIER: '42',
      UPSTREAM_TIMEZONE: 'America/Chicago',
    });
    expect(c.licensees.map((licensee) => licensee.account)).toEqual([
      { systemIdentifier: '42', key: 'k', timeZone: 'America/Chicago' },
    ]);
  });
});

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('loadConfig accepted the settings');
}

const client = (name: string, key: string, scopes: unknown = ['read']) => ({ name, apiKeySha256: sha256(key), scopes });

describe('LICENSEES_FILE and GATEWAY_AUTH', () => {
  it('reads every licensee, its upstream account (systemIdentifier and keyEnv) and its clients; api-key is the default', () => {
    const c = loadConfig({ ...licenseesEnv(), UPSTREAM_RATE_LIMIT: '100' });
    expect(c.auth).toEqual({ mode: 'api-key' });
    expect(c.licensees.map(({ id, account, rateLimit }) => ({ id, account, rateLimit }))).toEqual([
      {
        id: 'acme',
        account: { systemIdentifier: '1001', key: 'demo-key-1001', timeZone: 'UTC', rateLimit: 100 },
        rateLimit: 100,
      },
      {
        id: 'globex',
        account: { systemIdentifier: '2002', key: 'demo-key-2002', timeZone: 'America/New_York', rateLimit: 100 },
        rateLimit: 100,
      },
    ]);
    expect(c.licensees[1]?.clients.map((entry) => [entry.name, entry.scopes])).toEqual([
      ['globex-web', ['read']],
      ['globex-ops', ['read', 'write']],
    ]);
    expect(c.warnings).toEqual([]);
  });

  it('names every bad entry of the file in one message, and never echoes a key', () => {
    const file = {
      licensees: [
        {
          id: 'acme',
          systemIdentifier: '1001',
          keyEnv: 'UNSET_VARIABLE',
          clients: [{ name: 'web', apiKeySha256: sha256('k').toUpperCase(), scopes: ['admin'] }],
        },
        {
          id: 'globex',
          systemIdentifier: 'two',
          key: 'inline-upstream-secret',
          keyEnv: 'GLOBEX_UPSTREAM_KEY',
          timezone: 'Mars/Olympus',
          rateLimit: 0,
          keyenv: 'typo',
        },
        { id: 'initech', systemIdentifier: '3003' },
      ],
    };
    const message = configError(licenseesEnv(file));
    for (const expected of [
      'LICENSEES_FILE licensees[0] ("acme").keyEnv: names UNSET_VARIABLE, which is not set',
      'licensees[0] ("acme").clients[0].apiKeySha256: must be the lowercase hex SHA-256',
      'licensees[0] ("acme").clients[0].scopes[0]: must be "read", "write" or "webhooks:manage"',
      'licensees[1] ("globex").systemIdentifier: must be the licensee number',
      'licensees[1] ("globex").timezone: must be an IANA time zone',
      'licensees[1] ("globex").rateLimit: must be at least 1',
      'licensees[1] ("globex")',
      '"keyenv"',
      'licensees[2] ("initech").keyEnv: is required',
    ]) {
      expect(message).toContain(expected);
    }
    expect(message).not.toContain('inline-upstream-secret');
    expect(message).not.toContain(sha256('k').toUpperCase());
  });

  it('refuses duplicate licensee ids, systemIdentifiers, client names and client keys', () => {
    const acme = LICENSEES_JSON.licensees[0]!;
    const file = {
      licensees: [
        { ...acme, clients: [client('web', 'key-one'), client('ops', 'key-two')] },
        { ...acme, clients: [client('web', 'key-three'), client('other', 'key-one')] },
      ],
    };
    const message = configError(licenseesEnv(file));
    expect(message).toContain('licensees[1] ("acme").id: repeats the id of an earlier entry');
    expect(message).toContain('licensees[1] ("acme").systemIdentifier: repeats the systemIdentifier');
    expect(message).toContain('licensees[1] ("acme").clients[0].name: repeats the client name');
    expect(message).toContain('licensees[1] ("acme").clients[1].apiKeySha256: repeats the apiKeySha256');
  });

  it('says when the file cannot be read or is not JSON, without quoting its text', () => {
    expect(configError({ LICENSEES_FILE: '/nonexistent/licensees.json' })).toMatch(
      /LICENSEES_FILE cannot read \/nonexistent\/licensees.json \(ENOENT\)/,
    );
    const message = configError(licenseesEnv('{ "licensees": [ { "key": "leaked-secret" ,, } ] }'));
    expect(message).toMatch(/LICENSEES_FILE .*licensees.json is not valid JSON/);
    expect(message).not.toContain('leaked-secret');
  });

  it('refuses modes that cannot work: none with several licensees, api-key or jwt without a file, jwt without its settings', () => {
    expect(configError({ ...licenseesEnv(), GATEWAY_AUTH: 'none' })).toContain(
      'GATEWAY_AUTH: none cannot tell 2 licensees apart',
    );
    expect(configError({ GATEWAY_AUTH: 'api-key' })).toContain('GATEWAY_AUTH: api-key needs LICENSEES_FILE');
    expect(configError({ GATEWAY_AUTH: 'jwt' })).toContain('GATEWAY_AUTH: jwt needs LICENSEES_FILE');
    expect(configError({ GATEWAY_AUTH: 'basic' })).toContain('GATEWAY_AUTH: must be none, api-key or jwt');
    const jwt = configError({ ...licenseesEnv(), GATEWAY_AUTH: 'jwt' });
    expect(jwt).toContain('JWT_SECRET: GATEWAY_AUTH=jwt needs exactly one of JWT_SECRET (HS256) and JWT_JWKS_URL');
    expect(jwt).toContain('JWT_ISSUER: is required');
    expect(jwt).toContain('JWT_AUDIENCE: is required');
    const noClients = { licensees: [{ id: 'acme', systemIdentifier: '1001', keyEnv: 'ACME_UPSTREAM_KEY' }] };
    expect(configError(licenseesEnv(noClients))).toContain('GATEWAY_AUTH=api-key needs at least one client');
    expect(loadConfig({ ...licenseesEnv(noClients), GATEWAY_AUTH: 'none' }).licensees.map((l) => l.id)).toEqual([
      'acme',
    ]);
  });

  it('takes WEBHOOK_SECRET_KEY as 256-bit hex keys, the first sealing, and never echoes one', () => {
    const [key, old] = ['c'.repeat(64), 'd'.repeat(64)];
    expect(loadConfig({ WEBHOOK_SECRET_KEY: `${key},${old}` }).webhooks.secretKeys).toEqual([key, old]);
    expect(loadConfig({}).webhooks.secretKeys).toEqual([]);
    const wrong = configError({ WEBHOOK_SECRET_KEY: 'not-a-key-but-secret-words' });
    expect(wrong).toContain('WEBHOOK_SECRET_KEY: ');
    expect(wrong).toContain('64 hex digits');
    expect(wrong).not.toContain('secret-words');
  });

  it('checks the JWT settings and never echoes the secret', () => {
    const base = {
      ...licenseesEnv(),
      GATEWAY_AUTH: 'jwt',
      JWT_ISSUER: 'https://id.example.com/',
      JWT_AUDIENCE: 'gateway',
    };
    const short = configError({ ...base, JWT_SECRET: 'short-secret' });
    expect(short).toContain('JWT_SECRET: must be at least 32 bytes');
    expect(short).not.toContain('short-secret');
    expect(configError({ ...base, JWT_JWKS_URL: 'http://id.example.com/jwks.json' })).toContain(
      'JWT_JWKS_URL: must be an https URL (http only on a loopback address)',
    );
    expect(
      configError({ ...base, JWT_SECRET: 'x'.repeat(32), JWT_JWKS_URL: 'https://id.example.com/jwks.json' }),
    ).toContain('exactly one of');
    expect(
      loadConfig({ ...base, JWT_JWKS_URL: 'https://id.example.com/jwks.json', JWT_LICENSEE_CLAIM: 'tenant' }).auth,
    ).toEqual({
      mode: 'jwt',
      verify: { jwksUrl: 'https://id.example.com/jwks.json' },
      issuer: 'https://id.example.com/',
      audience: 'gateway',
      licenseeClaim: 'tenant',
    });
    expect(configError({ ...licenseesEnv(), JWT_SECRET: 'x'.repeat(32) })).toContain(
      'JWT_SECRET: is only used with GATEWAY_AUTH=jwt (it is api-key)',
    );
  });

  it('refuses UPSTREAM_KEY and UPSTREAM_SYSTEM_IDENTIFIER beside LICENSEES_FILE (they would be ignored)', () => {
    const message = configError({
      ...licenseesEnv(),
      UPSTREAM_KEY: 'upstream-secret',
      UPSTREAM_SYSTEM_IDENTIFIER: '1001',
    });
    expect(message).toContain('UPSTREAM_KEY: is not used with LICENSEES_FILE');
    expect(message).toContain('UPSTREAM_SYSTEM_IDENTIFIER: is not used with LICENSEES_FILE');
    expect(message).not.toContain('upstream-secret');
    // All licensees share UPSTREAM_BASE_URL; their credentials come from the file.
    expect(loadConfig({ ...licenseesEnv(), UPSTREAM_BASE_URL: 'https://service.example.com' }).licensees).toHaveLength(
      2,
    );
  });

  it("accepts docs/clients.md's LICENSEES_FILE example as it stands (docs that cannot rot)", () => {
    const clients = readFileSync(new URL('../../docs/clients.md', import.meta.url), 'utf8');
    const example = /```json\n(\{\n {2}"licensees"[\s\S]*?)```/.exec(clients)?.[1];
    expect(example).toBeDefined();
    const c = loadConfig({
      ...licenseesEnv(JSON.parse(example!)),
      ACME_UPSTREAM_KEY: 'acme-upstream',
      GLOBEX_UPSTREAM_KEY: 'globex-upstream',
    });
    expect(
      c.licensees.map((licensee) => [
        licensee.id,
        licensee.account.systemIdentifier,
        licensee.account.timeZone,
        licensee.clients.length,
      ]),
    ).toEqual([
      ['acme', '1001', 'America/Chicago', 2],
      ['globex', '2002', 'UTC', 1],
    ]);
  });

  it('warns about a key written in the file and about none on a non-loopback address', () => {
    const inline = {
      licensees: [{ id: 'local', systemIdentifier: '1001', key: 'demo-key-1001', clients: [client('dev', 'dev-key')] }],
    };
    const c = loadConfig(licenseesEnv(inline));
    expect(c.licensees[0]?.account.key).toBe('demo-key-1001');
    expect(c.warnings).toEqual([
      expect.stringContaining('licensee "local" has its upstream key written in LICENSEES_FILE'),
    ]);
    expect(c.warnings.join()).not.toContain('demo-key-1001');
    const publicNone = {
      HOST: '0.0.0.0',
      ALLOWED_HOSTS: 'gateway.example.com',
      GATEWAY_AUTH_NONE_ON_PUBLIC_HOST: 'yes',
    };
    expect(loadConfig(publicNone).warnings).toEqual([expect.stringContaining('GATEWAY_AUTH=none on HOST 0.0.0.0')]);
    expect(loadConfig({ HOST: '127.0.0.1' }).warnings).toEqual([]);
  });
});

describe('the doors’ settings: input bounds, server timeouts, hosts, operators, GraphiQL', () => {
  it('defaults to bounded inputs and timeouts of seconds, the loopback names, and GraphiQL on loopback', () => {
    const c = loadConfig({});
    expect(c.http).toEqual({
      maxRequestBytes: 1024 * 1024,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 1024,
    });
    expect(c.allowedHosts).toEqual(['localhost', '127.0.0.1', '[::1]']);
    expect(c).toMatchObject({ graphiql: true, operationNames: [] });
    expect(c.opsToken).toBeUndefined();
    // Another loopback address is a name of its own too; IPv6 in the brackets a Host header carries.
    expect(loadConfig({ HOST: '127.0.0.2' }).allowedHosts).toContain('127.0.0.2');
    expect(loadConfig({ HOST: '::1' }).allowedHosts).toEqual(['localhost', '127.0.0.1', '[::1]']);
  });

  it('reads each setting', () => {
    const c = loadConfig({
      QUERY_MAX_BYTES: '4096',
      MAX_REQUEST_BYTES: '65536',
      HTTP_HEADERS_TIMEOUT_MS: '2000',
      HTTP_REQUEST_TIMEOUT_MS: '4000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '3000',
      MAX_CONNECTIONS: '50',
      ALLOWED_HOSTS: 'Gateway.Example.com, 10.0.0.5,[::1]',
      OPS_TOKEN: 'a'.repeat(32),
      OPERATION_NAMES: 'EventPage, Reservations',
      GRAPHIQL: 'off',
    });
    expect(c.queryLimits.bytes).toBe(4096);
    expect(c.http).toEqual({
      maxRequestBytes: 65_536,
      headersTimeoutMs: 2000,
      requestTimeoutMs: 4000,
      keepAliveTimeoutMs: 3000,
      maxConnections: 50,
    });
    expect(c.allowedHosts).toEqual(['gateway.example.com', '10.0.0.5', '[::1]']);
    expect(c).toMatchObject({
      opsToken: 'a'.repeat(32),
      operationNames: ['EventPage', 'Reservations'],
      graphiql: false,
    });
  });

  it('names every bad value at once, and never echoes OPS_TOKEN', () => {
    const message = configError({
      QUERY_MAX_BYTES: '10',
      MAX_REQUEST_BYTES: 'a lot',
      MAX_CONNECTIONS: '0',
      HTTP_HEADERS_TIMEOUT_MS: '20000',
      HTTP_REQUEST_TIMEOUT_MS: '10000',
      ALLOWED_HOSTS: 'https://gateway.example.com',
      OPS_TOKEN: 'short secret',
      OPERATION_NAMES: 'Event-Page',
      GRAPHIQL: 'maybe',
    });
    for (const expected of [
      'QUERY_MAX_BYTES: must be at least 256',
      'MAX_REQUEST_BYTES: must be a number',
      'MAX_CONNECTIONS: must be at least 1',
      'HTTP_HEADERS_TIMEOUT_MS: must not be more than HTTP_REQUEST_TIMEOUT_MS (10000)',
      'ALLOWED_HOSTS: each must be a host name like api.example.com',
      'OPS_TOKEN: must be at least 16 printable characters without spaces',
      'OPERATION_NAMES: each must be a GraphQL operation name',
      'GRAPHIQL: must be on or off',
    ]) {
      expect(message).toContain(expected);
    }
    expect(message).not.toContain('short secret');
    expect(configError({ ALLOWED_HOSTS: 'gateway.example.com:443' })).toContain(
      'ALLOWED_HOSTS: each must be a host name',
    );
  });

  it('puts the operators’ pages on 127.0.0.1:9464 by default, and reads OPS_PORT and OPS_HOST', () => {
    expect(loadConfig({})).toMatchObject({ opsPort: 9464, opsHost: '127.0.0.1' });
    expect(loadConfig({}).opsAllowedHosts).toEqual(['localhost', '127.0.0.1', '[::1]']);
    const c = loadConfig({ OPS_PORT: '9100', OPS_HOST: '0.0.0.0', OPS_TOKEN: 'b'.repeat(32) });
    expect(c).toMatchObject({ opsPort: 9100, opsHost: '0.0.0.0', opsToken: 'b'.repeat(32) });
    // Port 0 for both: each listener picks a free port of its own (tests).
    expect(loadConfig({ PORT: '0', OPS_PORT: '0' })).toMatchObject({ port: 0, opsPort: 0 });
    expect(configError({ OPS_PORT: '70000' })).toContain('OPS_PORT: must be at most 65535');
  });

  it('refuses OPS_HOST off loopback without OPS_TOKEN, and OPS_PORT equal to PORT, naming the settings', () => {
    const open = configError({ OPS_HOST: '0.0.0.0' });
    expect(open).toContain('OPS_TOKEN: is required when OPS_HOST is not a loopback address (OPS_HOST=0.0.0.0)');
    expect(configError({ OPS_HOST: '10.0.0.5', OPS_TOKEN: 'short' })).toContain('OPS_TOKEN: must be at least 16');
    for (const host of ['127.0.0.1', 'localhost', '::1'])
      expect(loadConfig({ OPS_HOST: host }).opsToken).toBeUndefined();
    expect(configError({ PORT: '9464' })).toContain('OPS_PORT: must differ from PORT (both are 9464)');
    expect(configError({ PORT: '8080', OPS_PORT: '8080' })).toContain(
      'OPS_PORT: must differ from PORT (both are 8080)',
    );
    const secret = 'c'.repeat(40);
    expect(configError({ PORT: '8080', OPS_PORT: '8080', OPS_TOKEN: secret })).not.toContain(secret);
  });

  it('refuses a public HOST without ALLOWED_HOSTS, and GATEWAY_AUTH=none on it unless told it is meant', () => {
    const message = configError({ HOST: '0.0.0.0' });
    expect(message).toContain('ALLOWED_HOSTS: is required when HOST is not a loopback address (HOST=0.0.0.0)');
    expect(message).toContain('GATEWAY_AUTH: none on HOST=0.0.0.0 (not a loopback address)');
    expect(message).toContain('GATEWAY_AUTH_NONE_ON_PUBLIC_HOST=yes');
    expect(configError({ HOST: '0.0.0.0', ALLOWED_HOSTS: 'gateway.example.com' })).not.toContain('ALLOWED_HOSTS');
    const meant = loadConfig({
      HOST: '0.0.0.0',
      ALLOWED_HOSTS: 'gateway.example.com',
      GATEWAY_AUTH_NONE_ON_PUBLIC_HOST: 'yes',
    });
    expect(meant).toMatchObject({ auth: { mode: 'none' }, allowedHosts: ['gateway.example.com'], graphiql: false });
    // With client authentication a public HOST needs only its names.
    expect(loadConfig({ ...licenseesEnv(), HOST: '0.0.0.0', ALLOWED_HOSTS: 'gateway.example.com' }).auth.mode).toBe(
      'api-key',
    );
    expect(configError({ ...licenseesEnv(), GATEWAY_AUTH_NONE_ON_PUBLIC_HOST: 'yes' })).toContain(
      'GATEWAY_AUTH_NONE_ON_PUBLIC_HOST: is only used with GATEWAY_AUTH=none (it is api-key)',
    );
  });
});

describe('logger', () => {
  it('redacts credentials and personal data', () => {
    let out = '';
    const logger = createLogger('info', new Writable({ write: (c, _e, done) => ((out += c.toString()), done()) }));
    logger.info(
      {
        key: 'demo-key-1001',
        params: { token: 'abc', email: 'a@b.co' },
        contact: { firstName: 'Ada' },
        attendee: { lastName: 'Lovelace', phone: '555' },
      },
      'call',
    );
    expect(out).not.toMatch(/demo-key-1001|abc|a@b\.co|Ada|Lovelace|555/);
    expect(out).toContain('[redacted]');
  });
});

// Fault: Yoga's log calls were passed on as one array, so an error landed under the key "0".
describe('Yoga logging', () => {
  it('logs an error under err, where pino reads its type, message and stack', () => {
    let out = '';
    const logger = createLogger('debug', new Writable({ write: (c, _e, done) => ((out += c.toString()), done()) }));
    const logging = yogaLogging(logger);
    logging.error(new TypeError('boom'));
    logging.debug('Parsing request', { operationName: 'X' });
    const [error, debug] = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(error).toMatchObject({
      level: 50,
      msg: 'boom',
      err: { type: 'TypeError', message: 'boom', stack: expect.stringContaining('TypeError: boom') },
    });
    expect(error).not.toHaveProperty('0');
    expect(debug).toMatchObject({ level: 20, msg: 'Parsing request', details: [{ operationName: 'X' }] });
  });
});

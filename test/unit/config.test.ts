import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createLogger, yogaLogging } from '../../src/logger.ts';

describe('loadConfig', () => {
  it('defaults to the embedded emulator and its demo licensee', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 4000, host: '127.0.0.1', upstreamBaseUrl: undefined, auth: { mode: 'none' } });
    expect(c.licensees).toEqual([{ id: '1001', upstream: { id: '1001', key: 'demo-key-1001', timeZone: 'UTC' }, rateLimit: 240, clients: [] }]);
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
    for (const name of ['PORT', 'UPSTREAM_RATE_LIMIT', 'UPSTREAM_RATE_MARGIN', 'UPSTREAM_TIMEZONE', 'UPSTREAM_BASE_URL', 'LOG_LEVEL', 'GATEWAY_AUTH']) {
      expect(message).toContain(`${name}:`);
    }
    expect(message).toContain('"Mars/Olympus"');
    expect(message).not.toContain('secret-key');
  });

  it('reads the query limits and the CORS allow-list', () => {
    expect(loadConfig({}).queryLimits).toEqual({ depth: 12, aliases: 30, directives: 50, tokens: 1000 });
    expect(loadConfig({}).corsOrigins).toEqual([]);
    const c = loadConfig({ QUERY_MAX_DEPTH: '8', QUERY_MAX_TOKENS: '600', CORS_ORIGINS: 'https://app.example.com, http://localhost:3000' });
    expect(c.queryLimits).toMatchObject({ depth: 8, tokens: 600 });
    expect(c.corsOrigins).toEqual(['https://app.example.com', 'http://localhost:3000']);
    // Above 1200 tokens a document could nest deep enough to overflow graphql-js's parser.
    expect(() => loadConfig({ QUERY_MAX_TOKENS: '5000' })).toThrow(/QUERY_MAX_TOKENS: must be at most 1200/);
    expect(() => loadConfig({ CORS_ORIGINS: 'https://app.example.com/path' })).toThrow(/CORS_ORIGINS: each must be an origin/);
    expect(() => loadConfig({ CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS/);
  });

  it('requires credentials with an upstream', () => {
    expect(() => loadConfig({ UPSTREAM_BASE_URL: 'https://service.example.com' })).toThrow(/UPSTREAM_KEY and UPSTREAM_SYSTEM_IDENTIFIER are required/);
    const c = loadConfig({ UPSTREAM_BASE_URL: 'https://service.example.com', UPSTREAM_KEY: 'k', UPSTREAM_SYSTEM_IDENTIFIER: '42', UPSTREAM_TIMEZONE: 'America/Chicago' });
    expect(c.licensees.map((licensee) => licensee.upstream)).toEqual([{ id: '42', key: 'k', timeZone: 'America/Chicago' }]);
  });
});

describe('logger', () => {
  it('redacts credentials and personal data', () => {
    let out = '';
    const logger = createLogger('info', new Writable({ write: (c, _e, done) => ((out += c.toString()), done()) }));
    logger.info({ key: 'demo-key-1001', params: { token: 'abc', email: 'a@b.co' }, contact: { firstName: 'Ada' }, attendee: { lastName: 'Lovelace', phone: '555' } }, 'call');
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
    const [error, debug] = out.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(error).toMatchObject({ level: 50, msg: 'boom', err: { type: 'TypeError', message: 'boom', stack: expect.stringContaining('TypeError: boom') } });
    expect(error).not.toHaveProperty('0');
    expect(debug).toMatchObject({ level: 20, msg: 'Parsing request', details: [{ operationName: 'X' }] });
  });
});

import { request } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Rest, startRest } from '../helpers/rest.ts';

let rest: Rest;
beforeAll(async () => {
  rest = await startRest();
});
afterAll(() => rest.emulator.close());
beforeEach(() => rest.reset());

// Specification, section 9: which version serves which endpoint.
const MATRIX: Record<string, string[]> = {
  getevent: ['v1', 'v101', 'v102'],
  getgroupcodes: ['v1', 'v101', 'v102'],
  gethotels: ['v1', 'v101', 'v102'],
  postattendee: ['v1', 'v101', 'v102'],
  getgroupcodelink: ['v1', 'v101'],
  geteditreservationlink: ['v1', 'v101'],
  posteventquestion: ['v101', 'v102'],
  geteventquestions: ['v101', 'v102'],
  getreservation: ['v101', 'v102'],
  getreservationpagecount: ['v101', 'v102'],
  getattendeeanswers: ['v101', 'v102'],
  getattendeeanswerspagecount: ['v101', 'v102'],
  postmailinglistoptin: ['v101', 'v102'],
  getmailinglistoptin: ['v101', 'v102'],
  getmailinglistoptinpagecount: ['v101', 'v102'],
  getpickup: ['v102'],
  posteventhotelactualized: ['v102'],
  getshoppingviewhotels: ['v102'],
  postcustomfield: ['v102'],
  getcustomfields: ['v102'],
  postcustomfieldvalue: ['v102'],
};

/** A request sent as written: fetch would refuse or rewrite these targets. */
function rawRequest(
  method: string,
  target: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; body: any }> {
  const { hostname, port } = new URL(rest.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: hostname,
        port,
        method,
        path: target,
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('User-Agent', () => {
  // Fault: a bad JSON body without a User-Agent was answered 400, its body read first.
  it('is checked before the body is read: a malformed JSON body without one is 403', async () => {
    const res = await fetch(`${rest.url}/api/v102/getevent`, {
      method: 'POST',
      headers: { 'user-agent': '', 'content-type': 'application/json' },
      body: '{"token":',
    });
    expect([res.status, (await res.json()).error.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('answers 403 without one, on authenticate and everywhere else', async () => {
    const auth = await rest.post(
      'authenticate',
      { key: 'demo-key-1001', systemIdentifier: '1001' },
      { userAgent: null },
    );
    expect(auth.status).toBe(403);
    expect(auth.body.error.code).toBe('FORBIDDEN');
    const token = await rest.token();
    const res = await rest.post('getevent', { token, eventId: 5001 }, { userAgent: null });
    expect(res.status).toBe(403);
  });
});

describe('authenticate', () => {
  it('returns a new token on every call, valid in every version', async () => {
    const a = await rest.post('authenticate', { key: 'demo-key-1001', systemIdentifier: '1001' }, { version: 'v1' });
    const b = await rest.post('authenticate', { key: 'demo-key-1001', systemIdentifier: '1001' });
    expect(a.status).toBe(200);
    expect(typeof a.body.token).toBe('string');
    expect(a.body.token).not.toBe(b.body.token);
    for (const token of [a.body.token, b.body.token]) {
      expect((await rest.post('getevent', { token, eventId: 5001 }, { version: 'v102' })).status).toBe(200);
      expect((await rest.post('getevent', { token, eventId: 5001 }, { version: 'v1' })).status).toBe(200);
    }
  });

  it.each([
    [{ key: 'wrong', systemIdentifier: '1001' }, 401, 'INVALID_CREDENTIALS', undefined],
    [{ key: 'demo-key-1001', systemIdentifier: '2002' }, 401, 'INVALID_CREDENTIALS', undefined],
    [{ key: 'demo-key-1001', systemIdentifier: '9999' }, 401, 'INVALID_CREDENTIALS', undefined],
    [{ systemIdentifier: '1001' }, 400, 'MISSING_PARAMETER', 'key'],
    [{ key: 'demo-key-1001' }, 400, 'MISSING_PARAMETER', 'systemIdentifier'],
  ])('refuses %o', async (params, status, code, field) => {
    const res = await rest.post('authenticate', params);
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.field).toBe(field);
  });
});

describe('authenticate with JSON values', () => {
  // Fault: a JSON number as systemIdentifier was refused as bad credentials.
  it('takes systemIdentifier as a JSON number, like every integer parameter', async () => {
    const res = await rest.post('authenticate', { key: 'demo-key-1001', systemIdentifier: 1001 }, { json: true });
    expect(res.status).toBe(200);
    expect((await rest.post('getevent', { token: res.body.token, eventId: 5001 })).status).toBe(200);
  });

  // Fault: a token given as a number or an array was reported missing.
  it.each([[12345], [['not-a-token']], [{ value: 'x' }]])(
    'answers a token given as %j with 401 INVALID_TOKEN',
    async (token: unknown) => {
      const res = await rest.post('getevent', { token: token as never, eventId: 5001 }, { json: true });
      expect([res.status, res.body.error]).toEqual([
        401,
        { code: 'INVALID_TOKEN', message: 'token is invalid or expired', field: 'token' },
      ]);
    },
  );
});

describe('tokens', () => {
  it('requires a token on every other endpoint', async () => {
    const res = await rest.post('getevent', { eventId: 5001 });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'MISSING_PARAMETER', field: 'token' });
    const bad = await rest.post('getevent', { token: 'not-a-token', eventId: 5001 });
    expect(bad.status).toBe(401);
    expect(bad.body.error).toMatchObject({ code: 'INVALID_TOKEN', field: 'token' });
  });

  it('expires a token 30 minutes after its issue, on the moved clock', async () => {
    const token = await rest.token();
    await rest.control('clock', { advanceMs: 29 * 60_000 });
    expect((await rest.post('getevent', { token, eventId: 5001 })).status).toBe(200);
    const fresh = (await rest.post('authenticate', { key: 'demo-key-1001', systemIdentifier: '1001' })).body.token;
    await rest.control('clock', { advanceMs: 60_000 });
    const expired = await rest.post('getevent', { token, eventId: 5001 });
    expect(expired.status).toBe(401);
    expect(expired.body.error.code).toBe('INVALID_TOKEN');
    // An older token expiring leaves the newer one valid.
    expect((await rest.post('getevent', { token: fresh, eventId: 5001 })).status).toBe(200);
  });

  // Fault: moving the clock back revived expired tokens.
  it('keeps an expired token expired when the clock moves back, and a live one alive', async () => {
    const old = await rest.token();
    await rest.control('clock', { advanceMs: 20 * 60_000 });
    const young = (await rest.post('authenticate', { key: 'demo-key-1001', systemIdentifier: '1001' })).body.token;
    await rest.control('clock', { advanceMs: 11 * 60_000 });
    expect((await rest.post('getevent', { token: old, eventId: 5001 })).status).toBe(401);
    await rest.control('clock', { advanceMs: -31 * 60_000 });
    const revived = await rest.post('getevent', { token: old, eventId: 5001 });
    expect([revived.status, revived.body.error.code]).toEqual([401, 'INVALID_TOKEN']);
    expect((await rest.post('getevent', { token: young, eventId: 5001 })).status).toBe(200);
  });

  // Fault: a refused clock change had already moved the clock.
  it.each([{ advanceMs: 8.64e15 }, { advanceMs: -2000 * 365 * 86_400_000 }, { now: '0999-12-31T00:00:00Z' }])(
    'refuses the clock change %o without moving the clock',
    async (change) => {
      const token = await rest.token();
      const before = Date.parse((await rest.control('clock')).now);
      const refused = await rest.control('clock', change);
      expect([refused.status, refused.error.code]).toEqual([400, 'INVALID_PARAMETER']);
      const after = Date.parse((await rest.control('clock')).now);
      // The clock runs at real speed: it may have moved by the test's own duration, not by the change.
      expect(after - before).toBeGreaterThanOrEqual(0);
      expect(after - before).toBeLessThan(60_000);
      expect((await rest.post('getevent', { token, eventId: 5001 })).status).toBe(200);
    },
  );

  it('revokes every issued token at once', async () => {
    const token = await rest.token();
    await rest.control('revoke-tokens', {});
    expect((await rest.post('getevent', { token, eventId: 5001 })).status).toBe(401);
  });

  it('scopes a token to its licensee: another licensee’s event is not found', async () => {
    const res = await rest.call('getevent', { eventId: 6001 });
    expect(res.status).toBe(404);
    expect((await rest.call('getevent', { eventId: 6001 }, { licensee: '2002' })).status).toBe(200);
  });
});

describe('versions', () => {
  it('serves exactly the matrix of section 9, and 404 for everything else', async () => {
    const token = await rest.token();
    const seen: Record<string, string[]> = {};
    for (const endpoint of Object.keys(MATRIX)) {
      for (const version of ['v1', 'v101', 'v102', 'v103']) {
        const res = await rest.post(endpoint, { token }, { version });
        // A served endpoint refuses the missing parameters (400) or answers 410; never 404.
        const served = !(res.status === 404 && res.body.error.code === 'NOT_FOUND');
        if (served) (seen[endpoint] ??= []).push(version);
      }
    }
    expect(seen).toEqual(MATRIX);
    expect((await rest.post('nosuchendpoint', { token })).status).toBe(404);
    expect(
      (await rest.post('authenticate', { key: 'demo-key-1001', systemIdentifier: '1001' }, { version: 'v2' })).status,
    ).toBe(404);
  });

  it('answers 410 on the three mailing-list endpoints after checking and counting them', async () => {
    for (const endpoint of ['postmailinglistoptin', 'getmailinglistoptin', 'getmailinglistoptinpagecount']) {
      const res = await rest.call(endpoint, {}, { version: 'v101' });
      expect(res.status).toBe(410);
      expect(res.body.error.code).toBe('FEATURE_UNAVAILABLE');
      expect((await rest.post(endpoint, { token: 'bad' })).status).toBe(401);
    }
    const log = await rest.requests();
    expect(log.filter((r) => r.status === 410 && r.licensee === '1001')).toHaveLength(3);
  });

  it('accepts JSON bodies and query strings as well as forms', async () => {
    const token = await rest.token();
    expect((await rest.post('getevent', { token, eventId: 5001 }, { json: true })).body.eventId).toBe(5001);
    const res = await fetch(`${rest.url}/api/v102/getevent?token=${token}&eventId=5002`, {
      headers: { 'user-agent': 't' },
    });
    expect((await res.json()).eventId).toBe(5002);
  });

  it('answers a client’s mistakes with 400, never 500', async () => {
    const token = await rest.token();
    const cases: [string, string, string][] = [
      ['application/json', JSON.stringify({ token, eventId: { nested: true } }), 'eventId'],
      ['application/json', JSON.stringify({ token, eventId: [5001] }), 'eventId'],
      ['application/json', '[1,2]', ''],
      ['application/json', 'x'.repeat(2 << 20), ''],
      ['application/x-www-form-urlencoded', `token=${token}&eventId=%E0%A4%A`, 'eventId'],
      ['application/x-www-form-urlencoded', `token=${token}&eventId=99999999999999999999`, 'eventId'],
    ];
    for (const [type, body, field] of cases) {
      const res = await fetch(`${rest.url}/api/v102/getevent`, {
        method: 'POST',
        headers: { 'user-agent': 't', 'content-type': type },
        body,
      });
      expect(res.status).toBe(400);
      const error = (await res.json()).error;
      expect(error.code).toBe('INVALID_PARAMETER');
      if (field) expect(error.field).toBe(field);
    }
    expect((await rest.post('getevent', { token, eventId: 5001 })).status).toBe(200);
  });

  it('refuses a malformed JSON body with 400', async () => {
    const res = await fetch(`${rest.url}/api/v102/getevent`, {
      method: 'POST',
      headers: { 'user-agent': 't', 'content-type': 'application/json' },
      body: '{"token":',
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe('INVALID_PARAMETER');
  });
});

describe('request targets', () => {
  // Fault: a malformed absolute target answered 500 and was not logged.
  it('answers a malformed absolute target with 400 and logs it, without its query', async () => {
    const res = await rawRequest('GET', 'http://x:99999/api/v102/getevent?token=secret-in-query&eventId=5001', {
      'user-agent': 't',
    });
    expect([res.status, res.body.error.code]).toEqual([400, 'INVALID_PARAMETER']);
    const log = await rest.requests();
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ version: 'v102', endpoint: 'getevent', status: 400, params: {} });
    expect(JSON.stringify(log)).not.toContain('secret-in-query');
  });

  it('serves a well-formed absolute target like its path', async () => {
    const token = await rest.token();
    const res = await rawRequest('GET', `http://emulator.test/api/v102/getevent?token=${token}&eventId=5001`, {
      'user-agent': 't',
    });
    expect([res.status, res.body.eventId]).toEqual([200, 5001]);
  });
});

describe('request log', () => {
  // Fault: a deeply nested JSON parameter made /_emulator/requests answer 500 until a reset.
  it('logs parameters bounded in depth and length, and stays servable', async () => {
    const token = await rest.token();
    const depth = 200_000;
    const body = `{"token":"${token}","eventId":5001,"nested":${'['.repeat(depth)}${']'.repeat(depth)},"long":"${'x'.repeat(100_000)}"}`;
    const res = await fetch(`${rest.url}/api/v102/getevent`, {
      method: 'POST',
      headers: { 'user-agent': 't', 'content-type': 'application/json' },
      body,
    });
    expect(res.status).toBe(200);
    const served = await fetch(`${rest.url}/_emulator/requests`);
    expect(served.status).toBe(200);
    const entry = (await served.json()).requests.at(-1);
    expect(entry).toMatchObject({ endpoint: 'getevent', status: 200, params: { eventId: 5001 } });
    expect(JSON.stringify(entry.params).length).toBeLessThan(1000);
    expect(entry.params.long).toMatch(/^x{256}… \(100000 characters\)$/);
  });

  it('logs every request with its outcome and never the key or token', async () => {
    const token = await rest.token();
    await rest.post('getevent', { token, eventId: 5001 });
    await rest.post('getevent', { token, eventId: 424242 });
    await rest.post('getevent', { eventId: 5001 }, { userAgent: null });
    const log = await rest.requests();
    expect(log.map((r) => [r.endpoint, r.status, r.licensee])).toEqual([
      ['authenticate', 200, '1001'],
      ['getevent', 200, '1001'],
      ['getevent', 404, '1001'],
      ['getevent', 403, null],
    ]);
    expect(log[1]).toMatchObject({
      version: 'v102',
      userAgent: 'emulator-tests/1',
      fault: null,
      params: { eventId: '5001' },
    });
    const text = JSON.stringify(log);
    expect(text).not.toContain(token);
    expect(text).not.toContain('demo-key-1001');
  });
});

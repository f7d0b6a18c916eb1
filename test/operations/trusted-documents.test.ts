import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/environment.ts';
import { CLIENT_KEYS, licenseesEnv } from '../auth/licensees-fixture.ts';
import { GATEWAY_MAIN, ROOT } from '../helpers/built-gateway.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * TRUSTED_DOCUMENTS_FILE: only the manifest's documents run, named by id; a document sent as text
 * or an unknown id is refused before anything is sent upstream. The manifest is the one codegen's
 * client-preset writes (`"sha256:<hex of the document's text>": "<document>"`).
 */
const hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const EVENT = 'query EventName($eventId: Int!) { event(eventId: $eventId) { eventId name } }';
const TYPENAME = 'query Typename { __typename }';
// As the client-preset files them (prefixed), and as Apollo's manifests do (bare hex).
const MANIFEST = { [`sha256:${hex(EVENT)}`]: EVENT, [hex(TYPENAME)]: TYPENAME };

function manifestFile(content: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), 'trusted-')), 'persisted-documents.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway({ rateLimit: false }, { TRUSTED_DOCUMENTS_FILE: manifestFile(MANIFEST) });
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.gateway.upstream.clearCache();
  t.clearLog();
});

async function post(body: object) {
  const res = await t.gateway.yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    ...((await res.json()) as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] }),
  };
}

describe('trusted documents', () => {
  it('runs a trusted document sent as documentId (with the sha256: prefix) or as extensions.persistedQuery.sha256Hash', async () => {
    const byDocumentId = await post({ documentId: `sha256:${hex(EVENT)}`, variables: { eventId: 5001 } });
    expect(byDocumentId).toMatchObject({ status: 200, data: { event: { eventId: 5001 } } });
    expect(byDocumentId.errors).toBeUndefined();
    const byHash = await post({ extensions: { persistedQuery: { version: 1, sha256Hash: hex(TYPENAME) } } });
    expect(byHash).toMatchObject({ status: 200, data: { __typename: 'Query' } });
  });

  it('refuses an unknown id with PERSISTED_QUERY_NOT_FOUND, before any upstream call', async () => {
    const answer = await post({ documentId: `sha256:${hex('{ events { totalCount } }')}` });
    expect(answer.status).toBe(400);
    expect(answer.errors).toEqual([
      expect.objectContaining({
        message: expect.stringContaining('No trusted document has this id'),
        extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' },
      }),
    ]);
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  });

  it.each([
    [
      'a document sent as text, even a trusted one',
      { query: EVENT, variables: { eventId: 5001 } },
      /only trusted documents/,
    ],
    [
      'a document as text together with its id',
      { query: EVENT, documentId: `sha256:${hex(EVENT)}`, variables: { eventId: 5001 } },
      /only trusted documents/,
    ],
    ['neither a document nor an id', { variables: { eventId: 5001 } }, /Send the id of a trusted document/],
  ])('refuses %s with BAD_USER_INPUT, before any upstream call', async (_case, body, message) => {
    const answer = await post(body);
    expect(answer.status).toBe(400);
    expect(answer.errors).toEqual([
      expect.objectContaining({ message: expect.stringMatching(message), extensions: { code: 'BAD_USER_INPUT' } }),
    ]);
    expect(answer.data ?? null).toBeNull();
    expect(t.calls({ withAuthenticate: true })).toEqual([]);
  });

  it("reads documentId from a GET query string too (codegen's client-preset sends it there)", async () => {
    const url = `http://yoga/graphql?documentId=sha256:${hex(EVENT)}&variables=${encodeURIComponent(JSON.stringify({ eventId: 5001 }))}`;
    const res = await t.gateway.yoga.fetch(url, { headers: { accept: 'application/json', 'graphql-preflight': '1' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { event: { eventId: 5001, name: expect.any(String) } } });
  });

  it('without the setting, runs documents sent as text as before', async () => {
    const plain = await startGateway({ rateLimit: false });
    try {
      expect(await plain.exec(EVENT, { eventId: 5001 })).toMatchObject({
        status: 200,
        data: { event: { eventId: 5001 } },
      });
    } finally {
      await plain.close();
    }
  });
});

describe('the manifest, checked at start', () => {
  it('names every entry whose key is not the SHA-256 of its document, and every other bad entry, in one message', () => {
    const tampered = {
      [`sha256:${hex(EVENT)}`]: EVENT.replace('name', 'name eventId'),
      'sha1:0123456789': TYPENAME,
      [hex('{ nope')]: '{ nope',
      [hex(TYPENAME)]: TYPENAME,
    };
    let error: unknown;
    try {
      loadConfig({ TRUSTED_DOCUMENTS_FILE: manifestFile(tampered) });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const lines = (error as Error).message.split('\n').filter((line) => line.includes('TRUSTED_DOCUMENTS_FILE'));
    expect(lines).toEqual([
      expect.stringMatching(/"sha256:[0-9a-f]{12}…": is not the SHA-256 of its document/),
      expect.stringContaining('"sha1:0123456789": the key must be "sha256:" and 64 lowercase hex digits'),
      expect.stringMatching(/: the document is not valid GraphQL$/),
    ]);
  });

  it.each([
    ['not JSON', '{"sha256:', /is not valid JSON/],
    ['a list', '[]', /must be a JSON object/],
    ['empty', '{}', /lists no document/],
  ])('refuses a manifest that is %s', (_case, content, message) => {
    expect(() => loadConfig({ TRUSTED_DOCUMENTS_FILE: manifestFile(content) })).toThrow(message);
  });

  it('stops the gateway at start with exit code 2 and the reason', () => {
    const run = spawnSync(process.execPath, [GATEWAY_MAIN], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        TRUSTED_DOCUMENTS_FILE: manifestFile({ [`sha256:${hex(TYPENAME)}`]: `${TYPENAME} ` }),
      },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/TRUSTED_DOCUMENTS_FILE "sha256:[0-9a-f]{12}…": is not the SHA-256 of its document/);
  });
});

describe('automatic persisted queries (no manifest)', () => {
  const QUERY = 'query One { event(eventId: 5001) { eventId } }';
  const persisted = (query: string) => ({ persistedQuery: { version: 1, sha256Hash: hex(query) } });
  let apq: TestGateway;
  beforeAll(async () => {
    apq = await startGateway({ rateLimit: false }, { ...licenseesEnv() });
  });
  afterAll(() => apq.close());
  const send = async (body: object, client: keyof typeof CLIENT_KEYS = 'acme-web') => {
    const res = await apq.gateway.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        authorization: `Bearer ${CLIENT_KEYS[client]}`,
      },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      ...((await res.json()) as { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] }),
    };
  };

  it("an unknown hash answers PERSISTED_QUERY_NOT_FOUND (what Apollo's link falls back on), the text with its hash runs and is kept, then the hash alone runs", async () => {
    const first = await send({ extensions: persisted(QUERY) });
    expect(first.errors).toEqual([
      { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
    ]);
    expect(await send({ query: QUERY, extensions: persisted(QUERY) })).toMatchObject({
      status: 200,
      data: { event: { eventId: 5001 } },
    });
    expect(await send({ extensions: persisted(QUERY) })).toMatchObject({
      status: 200,
      data: { event: { eventId: 5001 } },
    });
  });

  it('a GET with the extension in its query string runs once the hash is known (for caching CDNs)', async () => {
    await send({ query: QUERY, extensions: persisted(QUERY) });
    const url = `http://yoga/graphql?extensions=${encodeURIComponent(JSON.stringify(persisted(QUERY)))}`;
    const res = await apq.gateway.yoga.fetch(url, {
      headers: {
        accept: 'application/json',
        authorization: `Bearer ${CLIENT_KEYS['acme-web']}`,
        'graphql-preflight': '1',
      },
    });
    expect(await res.json()).toEqual({ data: { event: { eventId: 5001 } } });
  });

  it("keeps hashes per licensee: another licensee's client does not find them", async () => {
    const other = 'query Other { __typename }';
    await send({ query: other, extensions: persisted(other) }, 'acme-web');
    expect((await send({ extensions: persisted(other) }, 'globex-web')).errors?.[0]?.extensions?.code).toBe(
      'PERSISTED_QUERY_NOT_FOUND',
    );
  });

  it("refuses a hash that is not the text's, and a malformed extension, with BAD_USER_INPUT", async () => {
    expect((await send({ query: QUERY, extensions: persisted('{ __typename }') })).errors?.[0]?.extensions?.code).toBe(
      'BAD_USER_INPUT',
    );
    expect(
      (await send({ extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } } })).errors?.[0]?.extensions?.code,
    ).toBe('BAD_USER_INPUT');
  });
});

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_KEYS, LICENSEES_JSON, licenseesEnv, sha256 } from '../auth/licensees-fixture.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { samples } from '../helpers/metrics.ts';

/*
 * `gateway.reload` (what a file change and SIGHUP call): whole or not at all, and a change held back
 * by the other file's problem is put in service with the next reload that succeeds.
 */
const EVENT = '{ event(eventId: 5001) { eventId } }';
const OPS_TOKEN = 'operators-token-0123456789abcdef';

describe('gateway.reload', () => {
  let t: TestGateway;
  let env: Record<string, string>;
  const documents = join(mkdtempSync(join(tmpdir(), 'documents-')), 'documents.json');
  const manifest = (texts: string[]) =>
    JSON.stringify(Object.fromEntries(texts.map((text) => [`sha256:${sha256(text)}`, text])));
  beforeAll(async () => {
    writeFileSync(documents, manifest([EVENT]));
    env = {
      ...licenseesEnv(),
      GATEWAY_AUTH: 'api-key',
      TRUSTED_DOCUMENTS_FILE: documents,
      LOG_LEVEL: 'silent',
      OPS_TOKEN,
    };
    t = await startGateway({ rateLimit: false }, env);
  });
  afterAll(() => t.close());

  const status = async (key: string) =>
    (
      await t.gateway.yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ documentId: `sha256:${sha256(EVENT)}` }),
      })
    ).status;
  const reloads = async () => {
    const res = await t.gateway.operators.fetch('http://yoga/metrics', {
      headers: { authorization: `Bearer ${OPS_TOKEN}` },
    });
    return Object.fromEntries(
      samples(await res.text(), 'gateway_config_reloads_total').map(({ labels, value }) => [
        `${labels.file}:${labels.outcome}`,
        value,
      ]),
    );
  };

  it('holds a licensees change back while the manifest is refused, and serves it with the next good reload', async () => {
    expect(await status(CLIENT_KEYS['acme-web'])).toBe(200);
    writeFileSync(documents, '{"sha256:nope": 1}');
    writeFileSync(
      env.LICENSEES_FILE!,
      JSON.stringify({
        licensees: LICENSEES_JSON.licensees.map((licensee) => ({
          ...licensee,
          clients: licensee.clients.filter((client) => client.name !== 'acme-web'),
        })),
      }),
    );
    t.gateway.reload(['LICENSEES_FILE'], env);
    // Refused whole: the old licensees and the old manifest serve on.
    expect(await status(CLIENT_KEYS['acme-web'])).toBe(200);
    expect(await reloads()).toEqual({ 'TRUSTED_DOCUMENTS_FILE:failure': 1 });

    writeFileSync(documents, manifest([EVENT]));
    t.gateway.reload(['TRUSTED_DOCUMENTS_FILE'], env);
    expect(await status(CLIENT_KEYS['acme-web'])).toBe(401);
    expect(await status(CLIENT_KEYS['acme-ops'])).toBe(200);
    expect(await reloads()).toEqual({
      'TRUSTED_DOCUMENTS_FILE:failure': 1,
      'TRUSTED_DOCUMENTS_FILE:success': 1,
      'LICENSEES_FILE:success': 1,
    });
  });
});

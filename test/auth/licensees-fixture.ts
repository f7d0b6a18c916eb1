import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Two licensees of the emulator in one LICENSEES_FILE, each with a read client and a read/write
 * client; the file holds only digests, the tests present the keys.
 */
export const CLIENT_KEYS = {
  'acme-web': 'acme-web-key-0c1d2e3f4a5b6c7d8e9f',
  'acme-ops': 'acme-ops-key-9f8e7d6c5b4a3f2e1d0c',
  'globex-web': 'globex-web-key-1a2b3c4d5e6f7a8b9c0d',
  'globex-ops': 'globex-ops-key-0d9c8b7a6f5e4d3c2b1a',
} as const;

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

export const LICENSEES_JSON = {
  licensees: [
    {
      id: 'acme',
      systemIdentifier: '1001',
      keyEnv: 'ACME_UPSTREAM_KEY',
      clients: [
        { name: 'acme-web', apiKeySha256: sha256(CLIENT_KEYS['acme-web']), scopes: ['read'] },
        { name: 'acme-ops', apiKeySha256: sha256(CLIENT_KEYS['acme-ops']), scopes: ['read', 'write'] },
      ],
    },
    {
      id: 'globex',
      systemIdentifier: '2002',
      keyEnv: 'GLOBEX_UPSTREAM_KEY',
      timezone: 'America/New_York',
      clients: [
        { name: 'globex-web', apiKeySha256: sha256(CLIENT_KEYS['globex-web']), scopes: ['read'] },
        { name: 'globex-ops', apiKeySha256: sha256(CLIENT_KEYS['globex-ops']), scopes: ['read', 'write'] },
      ],
    },
  ],
};

/** Writes `content` (the two licensees by default) to a fresh temporary directory; returns the settings naming it. */
export function licenseesEnv(content: unknown = LICENSEES_JSON): Record<string, string> {
  const path = join(mkdtempSync(join(tmpdir(), 'licensees-')), 'licensees.json');
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  return { LICENSEES_FILE: path, ACME_UPSTREAM_KEY: 'demo-key-1001', GLOBEX_UPSTREAM_KEY: 'demo-key-2002' };
}

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';

/**
 * TRUSTED_DOCUMENTS_FILE: the only operations the gateway runs, as the manifest codegen's
 * client-preset writes with `persistedDocuments: true` (persisted-documents.json): an object of
 * `"sha256:<hex>": "<document>"`, the hex being the SHA-256 of the document's text. A bare
 * `<hex>` key is taken too (Apollo's persisted-query manifests drop the prefix).
 */

/** The trusted documents by the lowercase hex SHA-256 of their text. */
export type TrustedDocuments = ReadonlyMap<string, string>;

export interface TrustedDocumentsReading {
  documents: TrustedDocuments;
  /** What is wrong, one line an entry; empty when the manifest is good. */
  problems: string[];
}

const HASH_KEY = /^(?:sha256:)?([0-9a-f]{64})$/;

/** Reads and checks the manifest at `path`: every entry must be a GraphQL document filed under its own SHA-256. */
export function readTrustedDocuments(path: string): TrustedDocumentsReading {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { documents: new Map(), problems: [code ? `cannot read ${path} (${code})` : `${path} is not valid JSON`] };
  }
  return parseTrustedDocuments(json);
}

/** Checks a manifest's content; a key is named by its first 12 characters. */
export function parseTrustedDocuments(json: unknown): TrustedDocumentsReading {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return {
      documents: new Map(),
      problems: [
        'must be a JSON object of "sha256:<hash>": "<document>" (the persisted-documents.json of ' +
          "codegen's client-preset)",
      ],
    };
  }
  const documents = new Map<string, string>();
  const problems: string[] = [];
  for (const [key, document] of Object.entries(json)) {
    const shown = JSON.stringify(key.length > 19 ? `${key.slice(0, 19)}…` : key);
    const hash = HASH_KEY.exec(key)?.[1];
    if (!hash) problems.push(`${shown}: the key must be "sha256:" and 64 lowercase hex digits`);
    else if (typeof document !== 'string') problems.push(`${shown}: the document must be a string of GraphQL`);
    else if (sha256(document) !== hash)
      problems.push(
        `${shown}: is not the SHA-256 of its document (the manifest was edited, or made with another hashAlgorithm than sha256)`,
      );
    else if (!isDocument(document)) problems.push(`${shown}: the document is not valid GraphQL`);
    else documents.set(hash, document);
  }
  if (problems.length === 0 && documents.size === 0) problems.push('lists no document: nothing could run');
  return { documents: problems.length === 0 ? documents : new Map(), problems };
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function isDocument(text: string): boolean {
  try {
    parse(text);
    return true;
  } catch {
    return false;
  }
}

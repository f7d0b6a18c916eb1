import { createHash } from 'node:crypto';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { ErrorCode } from '../error-codes.ts';
import type { DocumentSource } from './trusted-documents.ts';

/**
 * Automatic persisted queries (Apollo's protocol, which Apollo Client's PersistedQueryLink, urql's
 * persisted exchange and CDNs caching GETs speak), when no TRUSTED_DOCUMENTS_FILE is set: a client
 * sends `extensions.persistedQuery.sha256Hash` alone; an unknown hash answers
 * PERSISTED_QUERY_NOT_FOUND, the client sends the text with the hash once, and from then on the
 * hash is enough. Hashes are kept per licensee (one licensee's documents are not another's to
 * probe), in a bounded store: this process's LRU, or Redis with REDIS_URL so that every replica
 * knows a hash as soon as one does. With a manifest, trusted-documents.ts answers instead.
 */

/** Where the documents of hashes are kept: `key` is the licensee and the hash. */
export interface PersistedQueryStore {
  get(key: string): Promise<string | undefined>;
  set(key: string, document: string): Promise<void>;
}

/** This process's store: at most 1000 documents and 8 MiB, the least recently used dropped first. */
export class MemoryPersistedQueryStore implements PersistedQueryStore {
  private readonly documents = new LRUCache<string, string>({
    max: 1000,
    maxSize: 8 * 1024 * 1024,
    sizeCalculation: (document) => document.length + 1,
  });

  async get(key: string): Promise<string | undefined> {
    return this.documents.get(key);
  }

  async set(key: string, document: string): Promise<void> {
    this.documents.set(key, document);
  }
}

/** What a request sends: its text, and the hash of Apollo's persisted-query extension. */
export interface PersistedQueryParams {
  query?: unknown;
  extensions?: { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | null;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

const notFound = () =>
  // The message Apollo's and urql's links look for, besides the code.
  createGraphQLError('PersistedQueryNotFound', { extensions: { code: ErrorCode.PERSISTED_QUERY_NOT_FOUND } });

/**
 * The document a request names: its text as sent (remembered under its hash when it carries one),
 * or the text remembered for its hash; PERSISTED_QUERY_NOT_FOUND when the hash is unknown. Every
 * door asks it (HTTP and SSE through the plugin below, graphql-ws directly).
 */
async function persistedQueryOf(
  store: PersistedQueryStore,
  licensee: string,
  params: PersistedQueryParams,
): Promise<string | undefined> {
  const persisted = params.extensions?.persistedQuery;
  const query = typeof params.query === 'string' && params.query !== '' ? params.query : undefined;
  if (!persisted) return query;
  const hash = persisted.sha256Hash;
  if (persisted.version !== 1 || typeof hash !== 'string' || !/^[0-9a-f]{64}$/.test(hash)) {
    throw createGraphQLError(
      'extensions.persistedQuery must be {"version": 1, "sha256Hash": "<64 lowercase hex digits>"}.',
      { extensions: { code: ErrorCode.BAD_USER_INPUT } },
    );
  }
  const key = `${licensee}:${hash}`;
  if (query === undefined) {
    const known = await store.get(key);
    if (known === undefined) throw notFound();
    return known;
  }
  if (sha256(query) !== hash) {
    throw createGraphQLError('extensions.persistedQuery.sha256Hash is not the SHA-256 of the query sent with it.', {
      extensions: { code: ErrorCode.BAD_USER_INPUT },
    });
  }
  await store.set(key, query);
  return query;
}

/** Automatic persisted queries as the documents' source (without TRUSTED_DOCUMENTS_FILE): any text, by hash once sent. */
export function automaticPersistedQueries(
  store: PersistedQueryStore,
  licenseeOf: (request: Request) => string,
): DocumentSource {
  return {
    plugin: useAutomaticPersistedQueries(store, licenseeOf),
    documentOf: (request, params) => persistedQueryOf(store, licenseeOf(request), params as PersistedQueryParams),
  };
}

function useAutomaticPersistedQueries(store: PersistedQueryStore, licenseeOf: (request: Request) => string): Plugin {
  return {
    // Not async: a hook that returns a promise makes every request wait a turn for it.
    onParams({ params, request, setParams }) {
      if (!params.extensions?.persistedQuery) return;
      return persistedQueryOf(store, licenseeOf(request), params).then((query) => setParams({ ...params, query }));
    },
  };
}

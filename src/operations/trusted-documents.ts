import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import type { TrustedDocuments } from '../config/trusted-documents.ts';
import { ErrorCode } from '../error-codes.ts';

/** The refusals, the same on every door. */
const REFUSALS = {
  notFound: refusal(
    ErrorCode.PERSISTED_QUERY_NOT_FOUND,
    "No trusted document has this id: the gateway runs only the documents of its TRUSTED_DOCUMENTS_FILE. Rebuild the manifest from the client's operations and deploy it with the gateway.",
  ),
  persistedQueryOnly: refusal(
    ErrorCode.BAD_USER_INPUT,
    "This gateway runs only trusted documents: send the document's id as documentId or extensions.persistedQuery.sha256Hash, not its text.",
  ),
  keyNotFound: refusal(
    ErrorCode.BAD_USER_INPUT,
    'Send the id of a trusted document as documentId or extensions.persistedQuery.sha256Hash.',
  ),
};

/** What a request names: an id, its text, or both (GraphQL over HTTP's body, a graphql-ws payload). */
export interface DocumentParams {
  query?: unknown;
  documentId?: unknown;
  extensions?: { persistedQuery?: { sha256Hash?: unknown } } | null;
}

/**
 * Runs only the trusted documents, sent by id as `extensions.persistedQuery.sha256Hash` (Apollo's
 * persisted queries) or `documentId` (GraphQL over HTTP, codegen's client-preset); a document sent
 * as text is refused (BAD_USER_INPUT), and so is an unknown id (PERSISTED_QUERY_NOT_FOUND), on
 * every door. The batch check reads the documents a batch names through `documentOf`, with the
 * same answers.
 */
export function trustedDocuments(documents: DocumentLookup): DocumentSource {
  return {
    plugin: useTrustedDocuments(documents),
    documentOf: (_request, params) => trustedDocumentOf(documents, params as DocumentParams),
  };
}

/**
 * Where the documents operations name come from: the plugin that puts each operation's document
 * in its parameters, and the same lookup for a reader that needs a document before that (the batch
 * check). Throws, or answers undefined, for an operation that names none.
 */
/** The manifest's documents by id, as the manifest reads now (a reload replaces it: config/reload.ts). */
export type DocumentLookup = Pick<TrustedDocuments, 'get'>;

export interface DocumentSource {
  plugin: Plugin;
  documentOf(request: Request, params: object): Promise<string | undefined> | string | undefined;
}

function useTrustedDocuments(documents: DocumentLookup): Plugin {
  return {
    onPluginInit({ addPlugin }) {
      // Yoga's GET parser keeps only query, variables, operationName and extensions: a GET that
      // names its document (`/graphql?documentId=sha256:…`, as codegen's client-preset sends it)
      // would otherwise be refused as naming none.
      addPlugin({
        onParams({ params, request, setParams }) {
          if (request.method !== 'GET' || (params as DocumentParams).documentId !== undefined) return;
          const documentId = new URL(request.url).searchParams.get('documentId');
          if (documentId !== null) setParams({ ...params, documentId } as typeof params);
        },
      });
      addPlugin(
        usePersistedOperations({
          getPersistedOperation: (id) => documents.get(id) ?? null,
          extractPersistedOperationId: (params) => documentIdOf(params as DocumentParams),
          customErrors: REFUSALS,
        }) as Plugin,
      );
    },
  };
}

/** The trusted document a request names, or the refusal it gets (as a GraphQL error with its code). */
function trustedDocumentOf(documents: DocumentLookup, params: DocumentParams): string {
  const id = documentIdOf(params);
  const refused = (which: keyof typeof REFUSALS) =>
    createGraphQLError(REFUSALS[which].message, { extensions: REFUSALS[which].extensions });
  if (id === null)
    throw refused(
      typeof params.query === 'string' && params.query.trim() !== '' ? 'persistedQueryOnly' : 'keyNotFound',
    );
  const document = documents.get(id);
  if (document === undefined) throw refused('notFound');
  return document;
}

/** The lowercase hex id of the document a request names, with or without the "sha256:" prefix. */
function documentIdOf(params: DocumentParams): string | null {
  const id = params.documentId ?? params.extensions?.persistedQuery?.sha256Hash;
  if (typeof id !== 'string') return null;
  return id.startsWith('sha256:') ? id.slice('sha256:'.length) : id;
}

function refusal(code: ErrorCode, message: string) {
  return { message, extensions: { code, http: { status: 400 } } };
}

import { usePersistedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { Plugin } from 'graphql-yoga';
import type { TrustedDocuments } from '../config/trusted-documents.ts';
import { ErrorCode } from '../error-codes.ts';

/**
 * Runs only the trusted documents, sent by id as `extensions.persistedQuery.sha256Hash` (Apollo's
 * persisted queries) or `documentId` (GraphQL over HTTP, codegen's client-preset); a document sent
 * as text is refused (BAD_USER_INPUT), and so is an unknown id (PERSISTED_QUERY_NOT_FOUND).
 */
export function useTrustedDocuments(documents: TrustedDocuments): Plugin {
  return usePersistedOperations({
    getPersistedOperation: (id) => documents.get(id) ?? null,
    extractPersistedOperationId: (params) => documentIdOf(params as { documentId?: unknown; extensions?: { persistedQuery?: { sha256Hash?: unknown } } }),
    customErrors: {
      notFound: refusal(
        ErrorCode.PERSISTED_QUERY_NOT_FOUND,
        'No trusted document has this id: the gateway runs only the documents of its TRUSTED_DOCUMENTS_FILE. Rebuild the manifest from the client\'s operations and deploy it with the gateway.',
      ),
      persistedQueryOnly: refusal(
        ErrorCode.BAD_USER_INPUT,
        'This gateway runs only trusted documents: send the document\'s id as documentId or extensions.persistedQuery.sha256Hash, not its text.',
      ),
      keyNotFound: refusal(ErrorCode.BAD_USER_INPUT, 'Send the id of a trusted document as documentId or extensions.persistedQuery.sha256Hash.'),
    },
  }) as Plugin;
}

/** The lowercase hex id of the document a request names, with or without the "sha256:" prefix. */
function documentIdOf(params: { documentId?: unknown; extensions?: { persistedQuery?: { sha256Hash?: unknown } } }): string | null {
  const id = params.documentId ?? params.extensions?.persistedQuery?.sha256Hash;
  if (typeof id !== 'string') return null;
  return id.startsWith('sha256:') ? id.slice('sha256:'.length) : id;
}

function refusal(code: ErrorCode, message: string) {
  return { message, extensions: { code, http: { status: 400 } } };
}

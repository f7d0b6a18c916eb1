import { type DocumentNode, parse } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { ErrorCode } from '../error-codes.ts';
import { estimateUpstreamCalls } from './cost.ts';

/**
 * Batched requests (a JSON array of operations in one POST: Apollo Router's subgraph batching,
 * Apollo Client's BatchHttpLink, urql's batching): Yoga runs each operation as if sent alone,
 * through every check (credential, scopes, limits, cost, trusted documents, audit). This adds what
 * only a batch has: at most MAX_BATCH_OPERATIONS operations (400 naming the setting), and the
 * estimated upstream calls of all of them together at most QUERY_MAX_UPSTREAM_CALLS, like one
 * operation's (400 QUERY_TOO_COSTLY): a batch of ten operations each just under the limit must not
 * spend ten times what one may. Both are refused before anything of the batch runs.
 */
export interface BatchSettings {
  /** MAX_BATCH_OPERATIONS. */
  maxOperations: number;
  /** QUERY_MAX_UPSTREAM_CALLS: the whole batch's estimate, as one operation's. */
  maxUpstreamCalls: number;
  /** QUERY_MAX_BYTES and QUERY_MAX_TOKENS: a document past them is refused on its own, and costs nothing here. */
  maxDocumentBytes: number;
  maxTokens: number;
  /**
   * The text of the document an operation names: its query, or the persisted or trusted document
   * of its id. Throws (or answers undefined) when it names none: the operation fails on its own.
   */
  documentOf(request: Request, params: BatchedParams): Promise<string | undefined> | string | undefined;
}

export interface BatchedParams {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
  documentId?: unknown;
  extensions?: Record<string, unknown> | null;
}

export function useBatchLimits(settings: BatchSettings): Plugin {
  return {
    onRequestParse({ request }) {
      return {
        async onRequestParseDone({ requestParserResult }) {
          if (!Array.isArray(requestParserResult)) return;
          const count = requestParserResult.length;
          // Yoga would answer an empty batch with 200 [] and each element that is no object with an error of its own.
          if (!isBatchOfOperations(requestParserResult))
            throw createGraphQLError(
              'A batch is a JSON array of one or more operations, each an object with its query (or document id) and variables. Nothing was run.',
              { extensions: { code: ErrorCode.BAD_REQUEST, http: { status: 400 } } },
            );
          if (count > settings.maxOperations)
            throw createGraphQLError(
              `This batch holds ${count} operations, more than the ${settings.maxOperations} one batch may hold. The gateway's MAX_BATCH_OPERATIONS setting sets this limit: send fewer operations per batch. Nothing was sent to the reservation service.`,
              {
                extensions: {
                  code: ErrorCode.BAD_USER_INPUT,
                  limit: 'MAX_BATCH_OPERATIONS',
                  maxOperations: settings.maxOperations,
                  http: { status: 400 },
                },
              },
            );
          let estimatedCalls = 0;
          for (const params of requestParserResult as BatchedParams[]) {
            estimatedCalls += await estimateOf(request, params, settings);
            if (estimatedCalls > settings.maxUpstreamCalls) break;
          }
          if (estimatedCalls <= settings.maxUpstreamCalls) return;
          throw createGraphQLError(
            `The operations of this batch could make ${estimatedCalls} or more calls to the reservation service together, more than the ${settings.maxUpstreamCalls} allowed for one request (QUERY_MAX_UPSTREAM_CALLS counts a batch as one operation): send them in smaller batches or ask for less. Nothing was sent to the reservation service.`,
            {
              extensions: {
                code: ErrorCode.QUERY_TOO_COSTLY,
                limit: 'QUERY_MAX_UPSTREAM_CALLS',
                estimatedCalls,
                maxCalls: settings.maxUpstreamCalls,
                http: { status: 400 },
              },
            },
          );
        },
      };
    },
  };
}

/** One operation's estimate; 0 when it cannot run (no document, one past the limits, one that does not parse). */
async function estimateOf(request: Request, params: BatchedParams, settings: BatchSettings): Promise<number> {
  let text: string | undefined;
  try {
    text = await settings.documentOf(request, params);
  } catch {
    return 0; // refused on its own (PERSISTED_QUERY_NOT_FOUND, a document sent as text to trusted documents)
  }
  if (text === undefined || Buffer.byteLength(text, 'utf8') > settings.maxDocumentBytes) return 0;
  const document = parsed(text, settings.maxTokens);
  if (!document) return 0;
  const variables =
    typeof params.variables === 'object' && params.variables !== null && !Array.isArray(params.variables)
      ? (params.variables as Record<string, unknown>)
      : {};
  const operationName = typeof params.operationName === 'string' ? params.operationName : undefined;
  // The walk counts fields the schema has only: a document that does not validate adds nothing.
  return estimateUpstreamCalls(document, variables, operationName, settings.maxUpstreamCalls);
}

function parsed(text: string, maxTokens: number): DocumentNode | undefined {
  try {
    return parse(text, { maxTokens });
  } catch {
    return undefined;
  }
}

/** Whether a batch is what this plugin lets run: one or more operations, each an object (anything else is refused whole). */
export const isBatchOfOperations = (batch: readonly unknown[]): boolean =>
  batch.length > 0 && batch.every((params) => params !== null && typeof params === 'object' && !Array.isArray(params));

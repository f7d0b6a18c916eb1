import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { type DocumentNode, GraphQLError, type ValidationContext } from 'graphql';
import type { Plugin, YogaServerOptions } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { QueryLimits } from '../config/environment.ts';
import { ErrorCode } from '../error-codes.ts';
import { estimateUpstreamCalls } from './cost.ts';
import { refuseBeforeRun } from './refuse-before-run.ts';

/**
 * The limits a document must pass before anything runs: its length in bytes (before parsing), its
 * size in tokens (while parsing), its
 * depth, aliases and directives (while validating), and its estimated upstream calls (before
 * executing). Each refusal is a BAD_USER_INPUT error naming the limit and the setting behind it;
 * QUERY_TOO_COSTLY for the estimate.
 */
export function useQueryLimits(limits: QueryLimits, maxUpstreamCalls: number): Plugin[] {
  return [
    useDocumentBytesLimit(limits.bytes),
    // Counted inside parse, so a document deep enough to overflow graphql-js's recursive parser,
    // validation or field collection (about 2500 levels) is refused before it gets there.
    maxTokensPlugin({
      n: limits.tokens,
      propagateOnRejection: false,
      onReject: [(_context, error) => refuse(error, 'QUERY_MAX_TOKENS', 'send a smaller document')],
    }),
    // Fragments count by what they contain, not as a level of their own.
    maxDepthPlugin({
      n: limits.depth,
      flattenFragments: true,
      ...reported('QUERY_MAX_DEPTH', 'select fewer nested levels'),
    }),
    maxAliasesPlugin({ n: limits.aliases, ...reported('QUERY_MAX_ALIASES', 'use fewer aliases') }),
    maxDirectivesPlugin({ n: limits.directives, ...reported('QUERY_MAX_DIRECTIVES', 'use fewer directives') }),
    useUpstreamCostLimit(maxUpstreamCalls),
  ];
}

/**
 * A document longer than QUERY_MAX_BYTES is refused before it is parsed or looked up in the parse
 * cache (which keeps documents by their whole text): the token limit does not count comments or
 * whitespace, so without this a document padded with megabytes of comment passed. An `onParse`
 * hook, so every door that parses through Yoga's envelop (HTTP, SSE, graphql-ws) meets it.
 */
function useDocumentBytesLimit(maxBytes: number): Plugin {
  return {
    onParse({ params }) {
      const text = typeof params.source === 'string' ? params.source : params.source.body;
      // A UTF-8 character takes at most 3 bytes per UTF-16 unit: most documents need no count.
      if (text.length * 3 <= maxBytes) return;
      const bytes = Buffer.byteLength(text, 'utf8');
      if (bytes <= maxBytes) return;
      throw new GraphQLError(
        `The document is ${bytes} bytes long, more than the ${maxBytes} allowed (comments and whitespace count). The gateway's QUERY_MAX_BYTES setting sets this limit: send a smaller document. Nothing was sent to the reservation service.`,
        // 413 over HTTP (Yoga reads `http` and leaves it out of the answer).
        { extensions: { code: 'BAD_USER_INPUT', limit: 'QUERY_MAX_BYTES', maxBytes, http: { status: 413 } } },
      );
    },
  };
}

/** The armor plugins' own message ("… limit of N exceeded, found M."), with the setting and what to do. */
function limitError(error: GraphQLError, setting: string, advice: string): GraphQLError {
  const measured = error.message.replace(/^Syntax Error: /, '');
  return new GraphQLError(
    `${measured} The gateway's ${setting} setting sets this limit: ${advice}. Nothing was sent to the reservation service.`,
    {
      extensions: { code: ErrorCode.BAD_USER_INPUT, limit: setting },
    },
  );
}

/** Parsing has no validation context to report to: the error is thrown out of parse. */
function refuse(error: GraphQLError, setting: string, advice: string): never {
  throw limitError(error, setting, advice);
}

/** A validation rule's refusal, reported like graphql-js's own validation errors. */
function reported(setting: string, advice: string) {
  return {
    propagateOnRejection: false,
    onReject: [
      (context: ValidationContext | null, error: GraphQLError) =>
        context?.reportError(limitError(error, setting, advice)),
    ],
  };
}

/**
 * Refuses, before anything runs, an operation whose estimated upstream calls exceed the limit
 * (QUERY_TOO_COSTLY with extensions.estimatedCalls): one query must not spend the licensee's
 * whole budget.
 */
function useUpstreamCostLimit(maxCalls: number): Plugin {
  return refuseBeforeRun((args) => {
    const variables = (args.variableValues ?? {}) as Record<string, unknown>;
    const estimatedCalls = estimateUpstreamCalls(args.document, variables, args.operationName, maxCalls);
    if (estimatedCalls <= maxCalls) return undefined;
    return new GraphQLError(
      `This operation could make ${estimatedCalls} or more calls to the reservation service, more than the ${maxCalls} allowed for one operation: ask for smaller windows (first/last) or fewer nested lookups.`,
      { extensions: { code: ErrorCode.QUERY_TOO_COSTLY, estimatedCalls, maxCalls } },
    );
  });
}

/**
 * Yoga keeps parsed documents (and, per parsed document, their validation result and compiled
 * query) in caches of 1024 entries keyed by the document's whole text, so distinct large documents
 * held hundreds of MiB. These hold at most this much document text: a parsed document takes about
 * 40 times its text in memory, so about 40 MiB in all.
 */
const CACHED_DOCUMENT_TEXT = 1024 * 1024;
/** Parse errors are kept too (a client repeating a broken document is answered from here). */
const CACHED_ERROR_TEXT = 256 * 1024;
const CACHE_TTL_MS = 3_600_000;

type ParseCacheOptions = Exclude<YogaServerOptions<object, object>['parserAndValidationCache'], boolean | undefined>;

/** Yoga's parse and validation caches, bounded by the length of the documents they keep, not only by their number. */
export function boundedParseCaches(): ParseCacheOptions {
  const byLength = (_value: unknown, text: string) => Math.max(1, text.length);
  return {
    documentCache: new LRUCache<string, DocumentNode>({
      max: 1024,
      maxSize: CACHED_DOCUMENT_TEXT,
      sizeCalculation: byLength,
      ttl: CACHE_TTL_MS,
    }),
    errorCache: new LRUCache<string, object>({
      max: 256,
      maxSize: CACHED_ERROR_TEXT,
      sizeCalculation: byLength,
      ttl: CACHE_TTL_MS,
    }),
  };
}

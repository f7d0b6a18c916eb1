import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesPlugin } from '@escape.tech/graphql-armor-max-directives';
import { maxTokensPlugin } from '@escape.tech/graphql-armor-max-tokens';
import { type ExecutionArgs, type ExecutionResult, GraphQLError, type ValidationContext } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { QueryLimits } from '../config/environment.ts';
import { estimateUpstreamCalls } from './cost.ts';
import { ErrorCode } from '../error-codes.ts';

/**
 * The limits a document must pass before anything runs: its size in tokens (while parsing), its
 * depth, aliases and directives (while validating), and its estimated upstream calls (before
 * executing). Each refusal is a BAD_USER_INPUT error naming the limit and the setting behind it;
 * QUERY_TOO_COSTLY for the estimate.
 */
export function useQueryLimits(limits: QueryLimits, maxUpstreamCalls: number): Plugin[] {
  return [
    // Counted inside parse, so a document deep enough to overflow graphql-js's recursive parser,
    // validation or field collection (about 2500 levels) is refused before it gets there.
    maxTokensPlugin({ n: limits.tokens, propagateOnRejection: false, onReject: [(_context, error) => refuse(error, 'QUERY_MAX_TOKENS', 'send a smaller document')] }),
    // Fragments count by what they contain, not as a level of their own.
    maxDepthPlugin({ n: limits.depth, flattenFragments: true, ...reported('QUERY_MAX_DEPTH', 'select fewer nested levels') }),
    maxAliasesPlugin({ n: limits.aliases, ...reported('QUERY_MAX_ALIASES', 'use fewer aliases') }),
    maxDirectivesPlugin({ n: limits.directives, ...reported('QUERY_MAX_DIRECTIVES', 'use fewer directives') }),
    useUpstreamCostLimit(maxUpstreamCalls),
  ];
}

/** The armor plugins' own message ("… limit of N exceeded, found M."), with the setting and what to do. */
function limitError(error: GraphQLError, setting: string, advice: string): GraphQLError {
  const measured = error.message.replace(/^Syntax Error: /, '');
  return new GraphQLError(`${measured} The gateway's ${setting} setting sets this limit: ${advice}. Nothing was sent to the reservation service.`, {
    extensions: { code: ErrorCode.BAD_USER_INPUT, limit: setting },
  });
}

/** Parsing has no validation context to report to: the error is thrown out of parse. */
function refuse(error: GraphQLError, setting: string, advice: string): never {
  throw limitError(error, setting, advice);
}

/** A validation rule's refusal, reported like graphql-js's own validation errors. */
function reported(setting: string, advice: string) {
  return {
    propagateOnRejection: false,
    onReject: [(context: ValidationContext | null, error: GraphQLError) => context?.reportError(limitError(error, setting, advice))],
  };
}

/**
 * Refuses, before anything runs, an operation whose estimated upstream calls exceed the limit
 * (QUERY_TOO_COSTLY with extensions.estimatedCalls): one query must not spend the licensee's
 * whole budget.
 */
function useUpstreamCostLimit(maxCalls: number): Plugin {
  const check = ({ args, setResultAndStopExecution }: { args: ExecutionArgs; setResultAndStopExecution: (result: ExecutionResult) => void }) => {
    const variables = (args.variableValues ?? {}) as Record<string, unknown>;
    const estimatedCalls = estimateUpstreamCalls(args.document, variables, args.operationName, maxCalls);
    if (estimatedCalls <= maxCalls) return;
    setResultAndStopExecution({
        errors: [
          new GraphQLError(
            `This operation could make ${estimatedCalls} or more calls to the reservation service, more than the ${maxCalls} allowed for one operation: ask for smaller windows (first/last) or fewer nested lookups.`,
            { extensions: { code: ErrorCode.QUERY_TOO_COSTLY, estimatedCalls, maxCalls } },
          ),
        ],
      });
  };
  // Queries and mutations execute; subscriptions subscribe (over SSE and graphql-ws alike).
  return { onExecute: check, onSubscribe: check };
}

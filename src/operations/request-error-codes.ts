import { type ExecutionResult, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ErrorCode } from '../error-codes.ts';

/**
 * graphql-js reports a variable of the wrong type, or a required one missing, with no
 * `extensions.code`, unlike every other error a client reads. Such an error of the request itself
 * (no path: not raised while resolving a field, where errors are masked or coded) is BAD_USER_INPUT,
 * on every door: in each operation's result, and in an HTTP answer made before any operation ran.
 * Goes before every plugin that records a result's codes.
 */
export function useRequestErrorCodes(): Plugin {
  return {
    onExecutionResult({ result, setResult }) {
      if (!result) return;
      if (!(Symbol.asyncIterator in result)) {
        const coded = withCodes(result as ExecutionResult);
        if (coded !== result) setResult(coded);
      }
    },
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result)) setResult(result.map(withCodes));
      else if (!(Symbol.asyncIterator in result)) setResult(withCodes(result));
    },
  };
}

function withCodes<T extends ExecutionResult>(result: T): T {
  if (!result.errors?.some((error) => needsCode(error))) return result;
  const errors = result.errors.map((error) =>
    needsCode(error)
      ? new GraphQLError(error.message, {
          nodes: error.nodes,
          source: error.source,
          positions: error.positions,
          path: error.path,
          extensions: { ...error.extensions, code: ErrorCode.BAD_USER_INPUT },
        })
      : error,
  );
  return { ...result, errors };
}

const needsCode = (error: GraphQLError): boolean =>
  error.path === undefined && typeof error.extensions?.code !== 'string';

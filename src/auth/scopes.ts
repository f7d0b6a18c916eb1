import { type DocumentNode, getOperationAST } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { ErrorCode } from '../error-codes.ts';
import type { Principal, Scope } from './principal.ts';

/**
 * A mutation needs the `write` scope, a query or subscription `read`. Checked once the document
 * is valid and before anything runs, so a refused operation makes no upstream call.
 */
export function useScopes(principalOf: (context: unknown) => Principal): Plugin {
  const check = (document: DocumentNode, operationName: string | null | undefined, context: unknown) => {
    const needed: Scope = getOperationAST(document, operationName)?.operation === 'mutation' ? 'write' : 'read';
    if (principalOf(context).scopes.has(needed)) return undefined;
    const what = needed === 'write' ? 'run mutations' : 'run queries or subscriptions';
    return createGraphQLError(`This client may not ${what}: it lacks the "${needed}" scope.`, {
      extensions: { code: ErrorCode.FORBIDDEN, http: { status: 403 } },
    });
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const refusal = check(args.document, args.operationName, args.contextValue);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const refusal = check(args.document, args.operationName, args.contextValue);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
  };
}

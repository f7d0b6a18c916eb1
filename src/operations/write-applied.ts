import { type ExecutionResult, GraphQLError, getOperationAST } from 'graphql';
import { handleStreamOrSingleExecutionResult, type Plugin } from 'graphql-yoga';

/**
 * A mutation's root field returns once its write took effect, so an error below it (an id, a field
 * of the record written, a later read) is not the write's failure: answered as it was, the client
 * read a failed write and could send it again. Each such error (its path longer than the root
 * field's) keeps its code, gets `extensions.writeApplied: true`, and its message says the write
 * took effect (docs/clients.md, "Errors"). Envelop masks errors after every plugin's hooks, so the
 * errors are masked here first, by the gateway's own masking: the message amended is the one the
 * client receives, and an unexpected error's detail is still only logged.
 */
export function useWriteApplied(mask: (error: unknown) => Error): Plugin {
  const mark = ({ result, setResult }: { result: ExecutionResult; setResult: (result: ExecutionResult) => void }) => {
    if (!result.errors?.some(belowRootField)) return;
    setResult({
      ...result,
      errors: result.errors.map((error) => (belowRootField(error) ? applied(mask(error) as GraphQLError) : error)),
    });
  };
  return {
    onExecute({ args }) {
      if (getOperationAST(args.document, args.operationName)?.operation !== 'mutation') return undefined;
      // An incremental answer (@defer, @stream): each payload's `errors`, the ones envelop masks too.
      return { onExecuteDone: (payload) => handleStreamOrSingleExecutionResult(payload, mark) };
    },
  };
}

const belowRootField = (error: GraphQLError) => (error.path?.length ?? 0) > 1;

function applied(error: GraphQLError): GraphQLError {
  return new GraphQLError(
    `${error.path![0]} took effect (its write was applied: do not send it again), but part of its answer failed: ${error.message}`,
    { nodes: error.nodes, path: error.path, extensions: { ...error.extensions, writeApplied: true } },
  );
}

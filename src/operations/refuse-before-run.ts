import type { ExecutionArgs, GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * A check of an operation before anything of it runs, on every door: queries and mutations
 * execute, subscriptions subscribe (over SSE and graphql-ws alike), and the error `refusal`
 * answers, if any, is the operation's whole answer.
 */
export function refuseBeforeRun(refusal: (args: ExecutionArgs) => GraphQLError | undefined): Plugin {
  const check = ({
    args,
    setResultAndStopExecution,
  }: {
    args: ExecutionArgs;
    setResultAndStopExecution: (result: { errors: GraphQLError[] }) => void;
  }) => {
    const error = refusal(args);
    if (error) setResultAndStopExecution({ errors: [error] });
  };
  return { onExecute: check, onSubscribe: check };
}

import { GraphQLError } from 'graphql';
import type { Logger } from 'pino';
import { ErrorCode } from '../error-codes.ts';
import { UpstreamError } from '../upstream/errors.ts';

/**
 * The gateway's own coded errors pass through with their extensions.code (and retryAfterSeconds or
 * field); GraphQL's own request errors pass as they are; anything else becomes INTERNAL_SERVER_ERROR
 * with no detail, and is logged.
 */
export function maskError(error: unknown, logger?: Logger): Error {
  // Duck-typed: the executor's errors may come from another copy of graphql's classes.
  const graphqlError =
    error instanceof GraphQLError || (error instanceof Error && error.name === 'GraphQLError')
      ? (error as GraphQLError)
      : undefined;
  const original = graphqlError?.originalError ?? error;
  if (original instanceof UpstreamError) {
    const { field, retryAfterSeconds } = original.details;
    return new GraphQLError(original.message, {
      nodes: graphqlError?.nodes,
      path: graphqlError?.path,
      extensions: {
        code: original.code,
        ...(field ? { field } : {}),
        ...(retryAfterSeconds ? { retryAfterSeconds } : {}),
      },
    });
  }
  if (graphqlError && (!graphqlError.originalError || graphqlError.originalError.name === 'GraphQLError'))
    return graphqlError;
  logger?.error({ err: original instanceof Error ? original : String(original) }, 'unexpected error');
  return new GraphQLError('Unexpected error.', {
    nodes: graphqlError?.nodes,
    path: graphqlError?.path,
    extensions: { code: ErrorCode.INTERNAL_SERVER_ERROR },
  });
}

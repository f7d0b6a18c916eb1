import { type DocumentNode, getOperationAST, Kind } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { ErrorCode } from '../error-codes.ts';
import type { Principal, Scope } from './principal.ts';

/**
 * The root fields of webhook management: an operation that selects only these needs the
 * `webhooks:manage` scope, which their resolvers check (src/schema/webhook.ts), and neither `read`
 * nor `write`, so a client can be given the management of its webhooks and nothing else.
 */
export const WEBHOOK_ROOT_FIELDS: ReadonlySet<string> = new Set([
  'webhookEndpoints',
  'webhookEndpoint',
  'createWebhookEndpoint',
  'updateWebhookEndpoint',
  'deleteWebhookEndpoint',
  'enableWebhookEndpoint',
  'disableWebhookEndpoint',
  'rotateWebhookSecret',
  'pingWebhookEndpoint',
  'redeliverWebhook',
  'recoverWebhookEndpoint',
]);

/**
 * A mutation needs the `write` scope, a query or subscription `read`, an operation of webhook
 * management fields only `webhooks:manage`. Checked once the document is valid and before
 * anything runs, so a refused operation makes no upstream call.
 */
export function useScopes(principalOf: (context: unknown) => Principal): Plugin {
  const check = (document: DocumentNode, operationName: string | null | undefined, context: unknown) => {
    const operation = getOperationAST(document, operationName);
    const selections = operation?.selectionSet.selections ?? [];
    const isWebhookField = (selection: (typeof selections)[number]) =>
      selection.kind === Kind.FIELD && WEBHOOK_ROOT_FIELDS.has(selection.name.value);
    const managesWebhooks =
      operation?.operation !== 'subscription' &&
      selections.some(isWebhookField) &&
      selections.every(
        (selection) =>
          isWebhookField(selection) || (selection.kind === Kind.FIELD && selection.name.value === '__typename'),
      );
    const needed: Scope = managesWebhooks ? 'webhooks:manage' : operation?.operation === 'mutation' ? 'write' : 'read';
    if (principalOf(context).scopes.has(needed)) return undefined;
    const what =
      needed === 'webhooks:manage'
        ? 'manage webhooks'
        : needed === 'write'
          ? 'run mutations'
          : 'run queries or subscriptions';
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

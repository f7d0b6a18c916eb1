import { useGenericAuth, type ValidateUserFn } from '@envelop/generic-auth';
import {
  BREAK,
  type DefinitionNode,
  type DocumentNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLError,
  getOperationAST,
  Kind,
  type OperationDefinitionNode,
  visit,
} from 'graphql';
import { createGraphQLError, isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Scope } from '../config/licensees.ts';
import { ErrorCode } from '../error-codes.ts';
import type { Principal } from './principal.ts';

/**
 * Each root field declares the scope it needs as `@requiresScopes` (src/schema/scopes.ts), and
 * @envelop/generic-auth enforces it: once the document is valid and before anything runs, in
 * onExecute and onSubscribe (every door passes them), so a refused operation makes no upstream
 * call. An operation selecting a field whose scope the client lacks gets FORBIDDEN (HTTP 403)
 * naming the scope, and nothing of it runs. So `read` runs the queries and the subscription,
 * `write` the mutations, and `webhooks:manage` the webhook management fields alone.
 *
 * `principalOf` reads the request's principal from the context; it must be the context's
 * `principal` (GatewayContext), where generic-auth finds it again when it checks.
 */
export function useScopes(principalOf: (context: unknown) => Principal): Plugin {
  // generic-auth's check is a validation pass over the whole document, with the schema's type
  // information, on every operation (and it copies the context to set itself up). Its verdict
  // depends on the document, the operation, the client's scopes and, through @skip and @include,
  // the variables: an operation let through once is let through again without the pass while
  // those are the same (a refusal is checked each time).
  const auth = useGenericAuth<Principal, Record<string, unknown>, 'principal'>({
    mode: 'protect-granular',
    contextFieldName: 'principal',
    resolveUserFn: principalOf,
    extractScopes: (principal) => [...principal.scopes],
    validateUser: refuseMissingScopes,
  }) as Plugin;
  const checks: Plugin[] = [];
  auth.onPluginInit?.({ addPlugin: (plugin: Plugin) => void checks.push(plugin) } as never);
  const [validation] = checks as [Plugin];
  /** Each document's operations let through, as `operation name \0 scopes`. */
  const letThrough = new WeakMap<DocumentNode, Set<string>>();
  const check = (payload: CheckPayload, hook: 'onExecute' | 'onSubscribe') => {
    const { args } = payload;
    const parsed = args.document;
    const key = `${args.operationName ?? ''}\0${scopesKey(principalOf(args.contextValue))}`;
    if (letThrough.get(parsed)?.has(key)) return undefined;
    // As generic-auth sets its check up when the context is built, now that it is needed.
    validation.onContextBuilding?.({
      context: args.contextValue,
      extendContext: (extension: object) => Object.assign(args.contextValue as object, extension),
    } as never);
    // generic-auth checks every operation of the document: it is shown the one that runs alone.
    args.document = operationAlone(parsed, args.operationName);
    let refused = false;
    (validation[hook] as (payload: unknown) => void)({
      ...payload,
      setResultAndStopExecution: (result: ExecutionResult) => {
        refused = true;
        payload.setResultAndStopExecution(result);
      },
    });
    // It hands on a copy of the document: the plugins after it get the parsed one, whose identity
    // keys their caches (cost estimate, compiled execution, response cache).
    args.document = parsed;
    if (!refused && !dependsOnVariables(parsed)) {
      const known = letThrough.get(parsed) ?? new Set();
      known.add(key);
      letThrough.set(parsed, known);
    }
    return refused ? { oneErrorPerScope } : undefined;
  };
  return {
    onSchemaChange: (payload) => validation.onSchemaChange?.(payload),
    onExecute: (payload) => {
      const refused = check(payload as unknown as CheckPayload, 'onExecute');
      return refused && { onExecuteDone: refused.oneErrorPerScope };
    },
    onSubscribe: (payload) => {
      const refused = check(payload as unknown as CheckPayload, 'onSubscribe');
      return refused && { onSubscribeResult: refused.oneErrorPerScope };
    },
  };
}

interface CheckPayload {
  args: { document: DocumentNode; operationName?: string | null; contextValue: unknown };
  setResultAndStopExecution(result: ExecutionResult): void;
}

/** One error per scope lacking, located at every field that needs it: what to ask for, said once. */
function oneErrorPerScope({ result, setResult }: { result: unknown; setResult: (result: ExecutionResult) => void }) {
  if (isAsyncIterable(result)) return;
  const errors = (result as ExecutionResult).errors;
  if (errors?.length && errors.every((error) => refusals.has(error)))
    setResult({ ...(result as ExecutionResult), errors: mergedByMessage(errors) });
}

/** A principal's scopes as one key, what generic-auth's verdict depends on of the client. */
const scopeKeys = new WeakMap<Principal, string>();
function scopesKey(principal: Principal | undefined): string {
  if (!principal) return '';
  let key = scopeKeys.get(principal);
  if (key === undefined) scopeKeys.set(principal, (key = [...principal.scopes].sort().join(' ')));
  return key;
}

/** Whether a document holds @skip or @include, whose variables decide which fields generic-auth checks. */
const conditional = new WeakMap<DocumentNode, boolean>();
function dependsOnVariables(document: DocumentNode): boolean {
  let known = conditional.get(document);
  if (known === undefined) {
    known = false;
    visit(document, {
      Directive(node) {
        if (node.name.value === 'skip' || node.name.value === 'include') {
          known = true;
          return BREAK;
        }
        return undefined;
      },
    });
    conditional.set(document, known);
  }
  return known;
}

/** The errors refuseMissingScopes made: a result of these alone is a refusal of ours. */
const refusals = new WeakSet<object>();

/** Refusals of one message (one scope lacking) as one error, its locations every field refused. */
function mergedByMessage(errors: readonly GraphQLError[]): GraphQLError[] {
  const byMessage = new Map<string, GraphQLError[]>();
  for (const error of errors) byMessage.set(error.message, [...(byMessage.get(error.message) ?? []), error]);
  return [...byMessage.values()].map((same) =>
    same.length === 1
      ? same[0]!
      : createGraphQLError(same[0]!.message, {
          nodes: same.flatMap((error) => error.nodes ?? []),
          extensions: same[0]!.extensions,
        }),
  );
}

/** What each scope lets a client do, as a refusal names it. */
const WHAT_IT_LETS: Record<Scope, string> = {
  read: 'run queries or subscriptions',
  write: 'run mutations',
  'webhooks:manage': 'manage webhooks',
};

/** A field's required scopes (any one list of them, all of that list) against the principal's. */
const refuseMissingScopes: ValidateUserFn<Principal> = ({
  user,
  userScopes,
  fieldScopes,
  typeScopes,
  fieldAuthArgs,
  ...at
}) => {
  const where = { nodes: [at.fieldNode], path: at.path };
  if (!user) {
    // Authentication runs first (auth/plugin.ts): an operation gets here with a principal, or not at all.
    if (!fieldScopes && !typeScopes && !fieldAuthArgs) return undefined;
    return createGraphQLError('This operation needs a client credential.', {
      ...where,
      extensions: { code: ErrorCode.UNAUTHENTICATED, http: { status: 401 } },
    });
  }
  for (const required of [typeScopes, fieldScopes]) {
    if (!required?.length || required.some((all) => all.every((scope) => userScopes.includes(scope)))) continue;
    // The alternative closest to what the client holds names what it lacks.
    const [missing] = required
      .map((all) => all.filter((scope) => !userScopes.includes(scope)))
      .sort((a, b) => a.length - b.length);
    const scope = missing![0]!;
    const what = WHAT_IT_LETS[scope as Scope] ?? `select ${at.parentType.name}.${at.field.name}`;
    const refusal = createGraphQLError(`This client may not ${what}: it lacks the "${scope}" scope.`, {
      ...where,
      extensions: { code: ErrorCode.FORBIDDEN, http: { status: 403 } },
    });
    refusals.add(refusal);
    return refusal;
  }
  return undefined;
};

/** The document with only the operation `operationName` names (the only one, else) and the fragments it spreads. */
function operationAlone(document: DocumentNode, operationName: string | null | undefined): DocumentNode {
  const operation = getOperationAST(document, operationName);
  if (!operation || document.definitions.length === 1) return document;
  const fragments = new Map(
    document.definitions
      .filter((definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION)
      .map((fragment) => [fragment.name.value, fragment]),
  );
  const spread = new Set<string>();
  const follow = (node: OperationDefinitionNode | FragmentDefinitionNode) =>
    visit(node, {
      FragmentSpread(spreadNode) {
        const name = spreadNode.name.value;
        const fragment = fragments.get(name);
        if (spread.has(name) || !fragment) return;
        spread.add(name);
        follow(fragment);
      },
    });
  follow(operation);
  const kept = (definition: DefinitionNode) =>
    definition === operation || (definition.kind === Kind.FRAGMENT_DEFINITION && spread.has(definition.name.value));
  return { ...document, definitions: document.definitions.filter(kept) };
}

import { type DocumentNode, Kind, visit } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * A router running the same response cache as ours (Hive Gateway's is @envelop/response-cache)
 * asks us for `__responseCacheTypeName: __typename` and `__responseCacheId: id`; our response
 * cache removes every field of those names from its answers (they are its own metadata), so the
 * router got `id` missing and answered "Unexpected error". Such aliases are renamed before our
 * response cache sees the document, and given back their name in the answer, hit or miss.
 */
const METADATA_ALIASES = new Set(['__responseCacheTypeName', '__responseCacheId']);
const PREFIX = '__rgwClient';

/** Per parsed document: the one with the aliases renamed, or null when it has none. */
const renamed = new WeakMap<DocumentNode, DocumentNode | null>();

function withRenamedAliases(document: DocumentNode): DocumentNode | null {
  let known = renamed.get(document);
  if (known !== undefined) return known;
  let found = false;
  const result = visit(document, {
    Field(node) {
      if (!node.alias || !METADATA_ALIASES.has(node.alias.value)) return undefined;
      found = true;
      return { ...node, alias: { kind: Kind.NAME, value: PREFIX + node.alias.value } };
    },
  });
  known = found ? result : null;
  renamed.set(document, known);
  return known;
}

export function useRouterCacheAliases(): Plugin {
  const restore = new WeakSet<object>();
  return {
    // Before the response cache's own onExecute: it keys and rewrites the document it finds in args.
    onExecute({ args }) {
      const document = withRenamedAliases(args.document);
      if (!document) return;
      args.document = document;
      restore.add(args.contextValue as object);
    },
    onExecutionResult({ context, result, setResult }) {
      if (!restore.has(context) || typeof result !== 'object' || result === null || !('data' in result)) return;
      const answer = result as { data?: unknown };
      setResult({ ...answer, data: restored(answer.data) } as typeof result);
    },
  };
}

function restored(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(restored);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value))
    out[key.startsWith(PREFIX) ? key.slice(PREFIX.length) : key] = restored(inner);
  return out;
}

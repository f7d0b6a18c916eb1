import {
  type DocumentNode,
  GraphQLError,
  getOperationAST,
  Kind,
  type SelectionSetNode,
  valueFromASTUntyped,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { coercedVariables } from './coerced-variables.ts';
import { defersOrStreams } from './incremental.ts';

/**
 * Execution compiled once per document by graphql-jit instead of interpreted field by field: a
 * page of 1000 reservations costs about a quarter of the CPU and half the peak memory
 * (docs/decisions/0002-jit.md). GRAPHQL_JIT=off goes back to graphql-js.
 */
export function useCompiledExecution(): Plugin[] {
  // Subscriptions stay on graphql-js: graphql-jit's subscribe coerces the already coerced variables
  // again for each event and refuses an enum's internal value (a filter by reservationStatus).
  const compiled = ({ document, operationName }: { document: DocumentNode; operationName?: string | null }) =>
    getOperationAST(document, operationName)?.operation !== 'subscription' &&
    !defersOrStreams(document) &&
    expandedFields(document) <= MAX_COMPILED_FIELDS;
  return [useGraphQlJsVariables(), useJitOnFirstUse(compiled)];
}

/**
 * graphql-jit and what it brings (fast-json-stringify, ajv: 66 modules, about 3 MiB of heap) are
 * loaded by the first operation to compile, not at start: an idle gateway does not hold them.
 */
function useJitOnFirstUse(
  compiled: (args: { document: DocumentNode; operationName?: string | null }) => boolean,
): Plugin {
  let jit: Plugin | undefined;
  let loading: Promise<Plugin> | undefined;
  const load = () =>
    (loading ??= import('@envelop/graphql-jit').then(
      ({ useGraphQlJit }) => (jit = useGraphQlJit({}, { enableIf: compiled }) as Plugin),
    ));
  return {
    onExecute(payload) {
      if (jit) return jit.onExecute?.(payload);
      if (!compiled(payload.args)) return;
      return load().then((plugin) => plugin.onExecute?.(payload));
    },
  };
}

/**
 * graphql-jit compiles every field of a document with its fragments expanded in place: a document
 * that spreads fragments twice per level (valid, and cheap for graphql-js, which merges them per
 * object it resolves) would take exponential time to compile. Such documents run on graphql-js.
 */
const MAX_COMPILED_FIELDS = 5_000;

/** Fields of the document with every fragment spread expanded, counted with a memo per fragment, capped. */
export function expandedFields(document: DocumentNode): number {
  let fields = expandedFieldsOf.get(document);
  if (fields === undefined) expandedFieldsOf.set(document, (fields = countExpandedFields(document)));
  return fields;
}

/** Per parsed document (Yoga's parse cache hands the same one to each request of a document). */
const expandedFieldsOf = new WeakMap<DocumentNode, number>();

function countExpandedFields(document: DocumentNode): number {
  const fragments = new Map(
    document.definitions.flatMap((d) =>
      d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [],
    ),
  );
  const memo = new Map<string, number>();
  const cap = (n: number) => Math.min(n, MAX_COMPILED_FIELDS + 1);
  const count = (set: SelectionSetNode | undefined, path: ReadonlySet<string>): number => {
    let total = 0;
    for (const selection of set?.selections ?? []) {
      if (selection.kind === Kind.FIELD) total = cap(total + 1 + count(selection.selectionSet, path));
      else if (selection.kind === Kind.INLINE_FRAGMENT) total = cap(total + count(selection.selectionSet, path));
      else {
        const name = selection.name.value;
        if (path.has(name)) continue; // a cycle: refused by validation before execution
        if (!memo.has(name)) memo.set(name, count(fragments.get(name), new Set([...path, name])));
        total = cap(total + memo.get(name)!);
      }
    }
    return total;
  };
  return document.definitions.reduce(
    (sum, d) => cap(sum + (d.kind === Kind.OPERATION_DEFINITION ? count(d.selectionSet, new Set()) : 0)),
    0,
  );
}

/**
 * Variables are checked by graphql-js before the compiled query runs, so a client's mistake reads
 * exactly as it always did (graphql-js' messages, a 400, BAD_USER_INPUT), and a variable left out
 * takes its declared default: graphql-jit's own coercion reports a required variable that has a
 * default as "not provided". Defaults are filled in as the client would have sent them (untyped
 * JSON), so the compiled query coerces them like any other value.
 */
function useGraphQlJsVariables(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const operation = getOperationAST(args.document, args.operationName);
      const definitions = operation?.variableDefinitions ?? [];
      if (definitions.length === 0) return;
      const inputs = (args.variableValues ?? {}) as Record<string, unknown>;
      const coerced = coercedVariables(args.schema, definitions, inputs);
      if (coerced.errors) {
        // A request error, as graphql-js' executor answers it in Yoga: HTTP 400.
        const errors = coerced.errors.map(
          (e) =>
            new GraphQLError(e.message, {
              nodes: e.nodes,
              source: e.source,
              positions: e.positions,
              extensions: { ...e.extensions, http: { status: 400 } },
            }),
        );
        setResultAndStopExecution({ errors });
        return;
      }
      const missing = definitions.filter((d) => d.defaultValue !== undefined && !(d.variable.name.value in inputs));
      if (missing.length === 0) return;
      const filled = { ...inputs };
      for (const d of missing) filled[d.variable.name.value] = valueFromASTUntyped(d.defaultValue!);
      args.variableValues = filled;
    },
  };
}

import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { InputBounds } from '../config/environment.ts';
import { ErrorCode } from '../error-codes.ts';

/**
 * MAX_INPUT_DEPTH and MAX_INPUT_NODES: the JSON a request carries besides its document (its
 * `variables`, its `extensions`, any other body parameter, every operation of a batch) is measured
 * once, right after it is parsed, and refused with 400 BAD_REQUEST naming the setting before
 * anything else reads it. Much reads it later, and recursively: the cost estimate's memo key
 * (`JSON.stringify`), the response cache's key (a sorted JSON of its own), graphql-js's variable
 * coercion. 5,000 levels of `[[[…]]]` in an unused variable overflowed the stack in the first of
 * them (an INTERNAL_SERVER_ERROR); `JSON.parse` itself reads such nesting fine. The width bound
 * keeps every one of those walks short too: a 1 MiB body holds up to half a million values.
 *
 * Over HTTP and SSE the check is an `onRequestParseDone` hook, which Yoga runs after whichever
 * parser read the request (JSON, GET query string, form, multipart) and before its own checks of
 * the parameters, its batching check and every `onParams` hook (persisted queries, trusted
 * documents). graphql-ws checks each `subscribe` payload and each `connection_init`
 * payload (src/http/websocket.ts).
 */
export function useInputBounds(bounds: InputBounds): Plugin {
  return {
    onRequestParse() {
      return {
        onRequestParseDone({ requestParserResult }) {
          const error = inputBoundsError(requestParserResult, bounds);
          if (error) throw error;
        },
      };
    },
  };
}

/** What a request passed: the short form (a WebSocket close reason), the advice, the error's extensions. */
export interface InputBoundsProblem {
  summary: string;
  advice: string;
  extensions: { limit: 'MAX_INPUT_DEPTH'; maxDepth: number } | { limit: 'MAX_INPUT_NODES'; maxNodes: number };
}

/**
 * What `request` (a request's parameters, a batch of them, or a graphql-ws payload) passes when its
 * JSON nests deeper than `bounds.depth` or holds more than `bounds.nodes` values, else undefined.
 * Depth counts containers: the variables object is level 1, `{"v": [[1]]}` has 3. Values count every
 * member and element, containers included, over the whole request.
 */
export function inputBoundsProblem(
  request: unknown,
  bounds: InputBounds,
  what = 'request body',
): InputBoundsProblem | undefined {
  const budget = { nodes: bounds.nodes };
  for (const [part, value] of partsOf(request, what)) {
    const exceeded = measure(value, bounds, budget);
    // "variables nest", "request body nests".
    const plural = part === 'variables' || part === 'extensions';
    if (exceeded === 'depth')
      return {
        summary: `${part} ${plural ? 'nest' : 'nests'} deeper than ${bounds.depth} levels (MAX_INPUT_DEPTH)`,
        advice: 'send flatter input',
        extensions: { limit: 'MAX_INPUT_DEPTH', maxDepth: bounds.depth },
      };
    if (exceeded === 'nodes')
      return {
        summary: `${part} ${plural ? 'hold' : 'holds'} more than ${bounds.nodes} values (MAX_INPUT_NODES)`,
        advice: 'send less input (every member and element counts, over the whole request)',
        extensions: { limit: 'MAX_INPUT_NODES', maxNodes: bounds.nodes },
      };
  }
  return undefined;
}

/** The refusal of `request` as a GraphQL error (400 BAD_REQUEST over HTTP), else undefined. */
export function inputBoundsError(request: unknown, bounds: InputBounds): GraphQLError | undefined {
  const problem = inputBoundsProblem(request, bounds);
  if (!problem) return undefined;
  // Yoga answers with `http.status` and leaves it out of the body; graphql-ws drops it (websocket.ts).
  return new GraphQLError(`The ${problem.summary}, a setting of the gateway: ${problem.advice}. Nothing was run.`, {
    extensions: { code: ErrorCode.BAD_REQUEST, ...problem.extensions, http: { status: 400 } },
  });
}

/** The parameters of one request, or of each operation of a batch, named as a client knows them. */
function* partsOf(request: unknown, what: string): Generator<[string, unknown]> {
  const operations = Array.isArray(request) ? request : [request];
  for (const operation of operations) {
    if (!isRecord(operation)) {
      yield [what, operation];
      continue;
    }
    for (const key of Object.keys(operation)) {
      const value = operation[key];
      yield [key === 'variables' || key === 'extensions' ? key : what, value];
    }
  }
}

/**
 * Walks `value` with a stack of its own (never the call stack: the point is to survive nesting that
 * would overflow it) and stops at the first bound passed, so it costs at most `nodes` steps however
 * deep or wide the input. `budget.nodes` is what the request has left, spent across its parts.
 */
function measure(value: unknown, bounds: InputBounds, budget: { nodes: number }): 'depth' | 'nodes' | undefined {
  if (--budget.nodes < 0) return 'nodes';
  if (value === null || typeof value !== 'object') return undefined;
  const containers: object[] = [value];
  const levels: number[] = [1];
  while (containers.length > 0) {
    const container = containers.pop()!;
    const level = levels.pop()!;
    const enter = (child: unknown): boolean => {
      if (child === null || typeof child !== 'object') return true;
      if (level + 1 > bounds.depth) return false;
      containers.push(child);
      levels.push(level + 1);
      return true;
    };
    if (Array.isArray(container)) {
      // A wide array is refused on its length, before any of its elements is looked at.
      budget.nodes -= container.length;
      if (budget.nodes < 0) return 'nodes';
      for (const child of container) if (!enter(child)) return 'depth';
    } else {
      // Counted as they come (no Object.values: a copy of 100,000 values costs more than the walk).
      const record = container as Record<string, unknown>;
      for (const key in record) {
        if (--budget.nodes < 0) return 'nodes';
        if (!enter(record[key])) return 'depth';
      }
    }
  }
  return undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

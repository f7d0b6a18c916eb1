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
 * documents). Parameters that came another way (a graphql-ws `subscribe` payload) are measured in
 * `onParams`, before every later `onParams` hook; the socket's `connection_init` payload, which no
 * operation carries, is the door's (src/http/websocket.ts).
 */
export function useInputBounds(bounds: InputBounds): Plugin {
  /** The parameters measured when their request was parsed. */
  const measured = new WeakSet<object>();
  return {
    onParams({ params }) {
      if (measured.has(params)) return;
      const error = inputBoundsError(params, bounds);
      if (error) throw error;
    },
    onRequestParse({ request, requestParser, setRequestParser, fetchAPI }) {
      // A large JSON body is measured as text before it is parsed: parsing 100,000 members alone
      // takes longer than refusing them should. Only with a Content-Length, which the body limit
      // (body-limit.ts, before this plugin) has already held to MAX_REQUEST_BYTES.
      const length = Number(request.headers.get('content-length') ?? 0);
      if (requestParser && request.method === 'POST' && length > SCAN_TEXT_FROM_BYTES && isJson(request)) {
        const parse = requestParser;
        setRequestParser(async (incoming) => {
          const text = await incoming.text();
          const problem = jsonTextProblem(text, bounds);
          if (problem) throw errorOf(problem);
          const { url, method, headers } = incoming;
          return parse(new fetchAPI.Request(url, { method, headers, body: text }));
        });
      }
      // A long URL's `variables` and `extensions` likewise (Node's own server refuses a URL past 16
      // KiB with 431 unless its header bound is raised; an embedding server may not).
      if (request.method === 'GET' && request.url.length > SCAN_TEXT_FROM_BYTES) {
        const problem = jsonTextProblem(paramsText(new URL(request.url).searchParams), bounds);
        if (problem) throw errorOf(problem);
      }
      return {
        onRequestParseDone({ requestParserResult }) {
          const error = inputBoundsError(requestParserResult, bounds);
          if (error) throw error;
          for (const params of Array.isArray(requestParserResult) ? requestParserResult : [requestParserResult])
            if (typeof params === 'object' && params !== null) measured.add(params);
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
    if (exceeded) return problemOf(exceeded, part, bounds);
  }
  return undefined;
}

function problemOf(exceeded: 'depth' | 'nodes', part: string, bounds: InputBounds): InputBoundsProblem {
  // "variables nest", "request body nests".
  const plural = part === 'variables' || part === 'extensions';
  return exceeded === 'depth'
    ? {
        summary: `${part} ${plural ? 'nest' : 'nests'} deeper than ${bounds.depth} levels (MAX_INPUT_DEPTH)`,
        advice: 'send flatter input',
        extensions: { limit: 'MAX_INPUT_DEPTH', maxDepth: bounds.depth },
      }
    : {
        summary: `${part} ${plural ? 'hold' : 'holds'} more than ${bounds.nodes} values (MAX_INPUT_NODES)`,
        advice: 'send less input (every member and element counts, over the whole request)',
        extensions: { limit: 'MAX_INPUT_NODES', maxNodes: bounds.nodes },
      };
}

/** The refusal of `request` as a GraphQL error (400 BAD_REQUEST over HTTP), else undefined. */
export function inputBoundsError(request: unknown, bounds: InputBounds): GraphQLError | undefined {
  const problem = inputBoundsProblem(request, bounds);
  return problem && errorOf(problem);
}

function errorOf(problem: InputBoundsProblem): GraphQLError {
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

/** A GET request's JSON parameters as the body a POST would carry them in, for `jsonTextProblem`. */
function paramsText(search: URLSearchParams): string {
  const members = ['variables', 'extensions'].flatMap((name) => {
    const value = search.get(name);
    return value ? [`${JSON.stringify(name)}:${value}`] : [];
  });
  return `{${members.join(',')}}`;
}

/** Bodies and messages up to this size are parsed first and measured as values: parsing them costs little. */
export const SCAN_TEXT_FROM_BYTES = 16 * 1024;

const isJson = (request: Request) => /\bjson\b/i.test(request.headers.get('content-type') ?? '');

/**
 * What `text`, a request's JSON (one request's parameters or a batch of them), passes, measured
 * on the text in one pass without parsing it, as `inputBoundsProblem` measures the parsed value:
 * the depth below a request's own object and its values, each member and element counted, named
 * after the member of the request they are in. A string is skipped whole, escapes included.
 * Text that is no JSON at all is left for the parser to refuse, unless it passes a bound first.
 */
export function jsonTextProblem(
  text: string,
  bounds: InputBounds,
  what = 'request body',
  /** Where the request's own object is: 1 (a body: 2 in a batch, an array of them), 2 (a message's payload). */
  at?: 2,
): InputBoundsProblem | undefined {
  // Per open container: whether it is an object, and whether it holds a value yet.
  const isObject: boolean[] = [];
  const holds: boolean[] = [];
  let requestLevel = at ?? 1;
  let nodes = 0;
  let expectingKey = false;
  let part = what;
  const fail = (exceeded: 'depth' | 'nodes') => problemOf(exceeded, part, bounds);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = holds.length - 1;
    if (c === 0x22 /* " */) {
      const start = i + 1;
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
      if (expectingKey) {
        if (holds.length === requestLevel && isObject[top]) {
          const key = text.slice(start, i);
          part = key === 'variables' || key === 'extensions' ? key : what;
        }
        expectingKey = false;
      } else if (top >= 0) holds[top] = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (top >= 0) holds[top] = true;
      if (holds.length === 0 && c === 0x5b && at === undefined) requestLevel = 2;
      isObject.push(c === 0x7b);
      holds.push(false);
      expectingKey = c === 0x7b;
      if (holds.length - requestLevel > bounds.depth) return fail('depth');
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      const level = holds.length;
      if (holds.pop() && level >= requestLevel && ++nodes > bounds.nodes) return fail('nodes');
      isObject.pop();
      expectingKey = false;
    } else if (c === 0x2c /* , */) {
      if (holds.length >= requestLevel && ++nodes > bounds.nodes) return fail('nodes');
      expectingKey = isObject[top] === true;
    } else if (c > 0x20 && c !== 0x3a /* : */ && top >= 0) holds[top] = true;
  }
  return undefined;
}

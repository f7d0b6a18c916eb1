import { type ExecutionResult, GraphQLError } from 'graphql';
import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { ErrorCode } from '../error-codes.ts';

/**
 * Yoga's answers to requests it cannot read, made readable: a `variables` or `extensions`
 * parameter that is not JSON (in a GET query string or a form body) is a 400 naming the parameter
 * instead of a masked INTERNAL_SERVER_ERROR, its 415 and 406 answers, which have an empty
 * body, say in a GraphQL error what to send instead, and its 413 names MAX_REQUEST_BYTES.
 * (graphql-js's request errors get their code on every door: operations/request-error-codes.ts.)
 */
export function useReadableHttpErrors(limits: { maxRequestBytes: number }): Plugin {
  return {
    onRequestParse({ request, url, requestParser, setRequestParser }) {
      if (!requestParser) return; // answered 415 below
      const contentType = request.headers.get('content-type') ?? '';
      const form = request.method === 'POST' && contentType.startsWith('application/x-www-form-urlencoded');
      if (request.method !== 'GET' && !form) return; // a JSON body's syntax errors are already a 400
      setRequestParser(async (incoming) => {
        // Yoga's own parsers call JSON.parse on these two and let the SyntaxError through.
        const params = form ? new URLSearchParams(await incoming.clone().text()) : url.searchParams;
        for (const name of ['variables', 'extensions']) {
          const text = params.get(name);
          if (text) checkJson(name, text);
        }
        return requestParser(incoming);
      });
    },
    onResultProcess({ result, setResult }) {
      const readable = (one: ExecutionResult) => withBodyLimit(one, limits.maxRequestBytes);
      if (Array.isArray(result)) setResult(result.map(readable));
      else if (!(Symbol.asyncIterator in result)) setResult(readable(result));
    },
    onResponse({ response, setResponse, fetchAPI }) {
      // The status first: reading `body` makes a stream of the answer (a copy of its text as a Buffer).
      if ((response.status !== 415 && response.status !== 406) || response.body !== null) return;
      if (response.status === 415) {
        const message =
          'Unsupported Media Type: send a POST with Content-Type: application/json and a body like ' +
          '{"query": "…", "variables": {…}}, or a GET with the query in the query string.';
        setResponse(errorResponse(fetchAPI, 415, message, response.headers));
      } else if (response.status === 406) {
        const types = (response.headers.get('accept') ?? '')
          .split(',')
          .map((type) => type.split(';')[0]!.trim())
          .filter(Boolean);
        const message = `Not Acceptable: the Accept header must allow one of ${types.join(', ')}.`;
        setResponse(errorResponse(fetchAPI, 406, message, response.headers));
      }
    },
  };
}

/** Yoga's "Request body too large" (Content-Length over the bound, or a streamed body once past it), with the setting and the bound. */
function withBodyLimit<T extends ExecutionResult>(result: T, maxBytes: number): T {
  if (!result.errors?.some((error) => error.extensions?.code === ErrorCode.REQUEST_ENTITY_TOO_LARGE)) return result;
  const message = `The request body is larger than the ${maxBytes} bytes allowed: the gateway's MAX_REQUEST_BYTES setting sets this limit. Send a smaller request. Nothing was run.`;
  const errors = result.errors.map((error) =>
    error.extensions?.code === ErrorCode.REQUEST_ENTITY_TOO_LARGE
      ? new GraphQLError(message, { extensions: { ...error.extensions, limit: 'MAX_REQUEST_BYTES', maxBytes } })
      : error,
  );
  return { ...result, errors };
}

function checkJson(name: string, text: string): void {
  try {
    JSON.parse(text);
  } catch (error) {
    throw createGraphQLError(`The ${name} parameter is not valid JSON (${(error as Error).message}).`, {
      extensions: { code: ErrorCode.BAD_REQUEST, http: { status: 400 } },
    });
  }
}

function errorResponse(
  fetchAPI: { Response: typeof Response },
  status: number,
  message: string,
  headers: Headers,
): Response {
  const body = JSON.stringify({ errors: [{ message, extensions: { code: ErrorCode.BAD_REQUEST } }] });
  const merged = new Headers(headers);
  merged.set('content-type', 'application/json; charset=utf-8');
  return new fetchAPI.Response(body, { status, headers: merged });
}

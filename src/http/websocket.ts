import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { type ExecutionArgs, type ExecutionResult, GraphQLError, type GraphQLFormattedError, parse } from 'graphql';
import { CloseCode } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { type GraphQLParams, isAsyncIterable } from 'graphql-yoga';
import type { Logger } from 'pino';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { atTime } from '../auth/credential-expiry.ts';
import type { Authenticator } from '../auth/verdict.ts';
import type { InputBounds } from '../config/environment.ts';
import { isWrittenFromKeptJson, stringifyKept } from '../operations/kept-json.ts';
import { isAllowedPage, type PageOrigins } from './cross-site.ts';
import { hostNameOf, isAllowedHost } from './hosts.ts';
import { inputBoundsProblem, jsonTextProblem, SCAN_TEXT_FROM_BYTES } from './input-bounds.ts';

export interface WebSocketTransport {
  /** Sockets open now (tests: a client that left leaves none). */
  open(): number;
  close(): Promise<void>;
}

/** The one pipeline: Yoga's path from an operation's parameters to its result (every rule on the way). */
export interface Pipeline {
  graphqlEndpoint: string;
  getResultForParams(
    payload: { params: GraphQLParams; request: Request },
    context: Record<string, unknown>,
  ): PromiseLike<Outcome> | Outcome;
}

type Outcome = ExecutionResult | AsyncIterable<ExecutionResult> | undefined;

export interface WebSocketOptions {
  /** Checks the connection's credential when the socket opens, to close it at once when refused, and when it expires. */
  authenticate: Authenticator;
  /** The pages that may open a socket, as CORS lets them read an answer (and the gateway's own names: GraphiQL). */
  pages: PageOrigins;
  /** ALLOWED_HOSTS: the Host names the upgrade is answered for. */
  allowedHosts: readonly string[];
  /** MAX_REQUEST_BYTES: the longest message read. */
  maxMessageBytes: number;
  /** MAX_INPUT_DEPTH and MAX_INPUT_NODES: a `connection_init` payload or a large message past them closes with 4400. */
  inputBounds: InputBounds;
  /** SUBSCRIPTION_KEEPALIVE_MS: how often each socket is pinged (closed when its pong has not come by the next). */
  keepAliveMs: number;
  /** Masks what the pipeline could not turn into a result (the gateway's own masking). */
  mask: (error: unknown) => Error;
  logger?: Logger;
}

/** What graphql-ws asks an operation to be: its result comes from the pipeline, not from graphql-ws' executor. */
const PIPELINE_OPERATION = parse('{ __typename }');

/**
 * GraphQL over WebSocket (the graphql-ws protocol, as Apollo Client and urql speak it) at the same
 * path as HTTP, `/graphql`: a thin adapter over the one pipeline. Each `subscribe` message's
 * payload runs Yoga's `getResultForParams`, as an HTTP request's parameters do, with a request
 * carrying the upgrade's headers and the connection's credential: authentication, scopes, trusted
 * documents and persisted queries, input bounds, the router's signature, limits, cost, expiry, the
 * subscription cap, the audit line, the metrics and the error codes are the same hooks on every door.
 *
 * What is left here is the transport's: the upgrade is refused for a Host not in ALLOWED_HOSTS (421)
 * or a page of an origin not allowed (403); a message longer than MAX_REQUEST_BYTES closes the socket
 * (1009), a large one past the input bounds 4400 before it is parsed; a client whose credential is
 * refused is closed with 4403 before any operation runs, and with 4401 when it expires; each socket
 * is pinged; and an operation refused before it ran gets an `error` message of its own (no
 * `extensions.http`, which means nothing here), while the socket and its other operations live on.
 */
export function serveWebSockets(server: Server, pipeline: Pipeline, options: WebSocketOptions): WebSocketTransport {
  const sockets = new WebSocketServer({
    server,
    path: pipeline.graphqlEndpoint,
    // No message past MAX_REQUEST_BYTES is read, `connection_init` included: ws closes with 1009 on the announced length.
    maxPayload: options.maxMessageBytes,
    verifyClient: ({ req }, done) => {
      if (!isAllowedHost(req.headers.host, options.allowedHosts))
        return done(false, 421, 'This gateway does not answer for this host name (ALLOWED_HOSTS).');
      if (!allowedOrigin(req.headers.origin, options))
        return done(false, 403, 'Pages of this origin may not open a socket (CORS_ORIGINS).');
      done(true);
    },
  });
  /** Cancels each socket's close at its credential's expiry. */
  const expiries = new WeakMap<object, () => void>();
  const kept = new KeptPayloads();
  // graphql-ws parses a message whole before any hook sees it: a large one is measured as text first.
  sockets.on('connection', (socket) => {
    measureMessages(socket, options.inputBounds);
    kept.spliceInto(socket);
  });
  const disposable = useServer(
    {
      // The operation already ran in the pipeline (onSubscribe): its result is handed over as is.
      execute: (args) => args.rootValue as never,
      subscribe: (args) => args.rootValue as never,
      async onConnect(ctx) {
        // Before the payload's Authorization is read. (ws closes with the reason's first 123 bytes at most.)
        const problem = inputBoundsProblem(
          ctx.connectionParams ?? null,
          options.inputBounds,
          'connection_init payload',
        );
        if (problem) {
          ctx.extra.socket.close(CloseCode.BadRequest, problem.summary);
          return false;
        }
        const verdict = await options.authenticate(requestOf(ctx.extra.request.headers, ctx.connectionParams));
        if (!('principal' in verdict)) return false;
        const { expiresAt } = verdict.principal;
        const close = () => ctx.extra.socket.close(CloseCode.Unauthorized, 'Unauthorized: the token has expired');
        if (expiresAt !== undefined) expiries.set(ctx.extra, atTime(expiresAt, close));
        return true;
      },
      onClose(ctx) {
        expiries.get(ctx.extra)?.();
      },
      async onSubscribe(ctx, _id, payload) {
        const request = requestOf(ctx.extra.request.headers, ctx.connectionParams);
        let result: Outcome;
        try {
          result = await pipeline.getResultForParams({ params: payload as GraphQLParams, request }, {});
        } catch (error) {
          return [forSocket(options.mask(error))];
        }
        if (result === undefined) return [forSocket(options.mask(new Error('the pipeline gave no result')))];
        // Refused before it ran (no `data`): the protocol's `error` message, as for a document that is not valid.
        if (!isAsyncIterable(result) && !('data' in result) && result.errors?.length)
          return result.errors.map(forSocket);
        return { document: PIPELINE_OPERATION, rootValue: result } as ExecutionArgs;
      },
      jsonMessageReplacer: kept.replacer,
      // Errors as a socket sends them: without `extensions.http`, which is HTTP's.
      onNext: (_ctx, _id, _payload, _args, result) =>
        result.errors ? { ...result, errors: result.errors.map((error) => forSocket(error).toJSON()) } : undefined,
    },
    sockets,
    options.keepAliveMs,
  );

  // After graphql-ws's own listener: a socket's error (a message over the bound, which ws has
  // already answered with 1009, or a connection reset) goes to the logger, not to stderr as
  // graphql-ws prints it. ws closes the socket on every such error itself.
  sockets.on('connection', (socket) => {
    socket.removeAllListeners('error');
    socket.on('error', (error: Error & { code?: string }) => {
      if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH')
        options.logger?.info(
          `a WebSocket message over MAX_REQUEST_BYTES (${options.maxMessageBytes}): closed with 1009`,
        );
      else options.logger?.warn({ err: error }, 'WebSocket error: socket closed');
    });
  });

  return {
    open: () => sockets.clients.size,
    async close() {
      await disposable.dispose();
      await new Promise<void>((resolve) => sockets.close(() => resolve()));
    },
  };
}

/** An error as a socket sends it: a GraphQLError (graphql-ws' check), without Yoga's `extensions.http`. */
function forSocket(error: Error | GraphQLFormattedError): GraphQLError {
  const { http: _http, ...extensions } = (error as { extensions?: Record<string, unknown> }).extensions ?? {};
  if (error instanceof GraphQLError && !_http) return error;
  return new GraphQLError(error.message, {
    ...(error instanceof GraphQLError ? { nodes: error.nodes, source: error.source, positions: error.positions } : {}),
    path: 'path' in error ? error.path : undefined,
    extensions,
  });
}

/** A Request carrying the upgrade's headers, the init payload's `Authorization` taking precedence. */
function requestOf(
  headers: Record<string, string | string[] | undefined>,
  connectionParams: Readonly<Record<string, unknown>> | undefined,
): Request {
  const merged = new Headers();
  for (const [name, value] of Object.entries(headers)) if (typeof value === 'string') merged.set(name, value);
  const offered = connectionParams?.Authorization ?? connectionParams?.authorization;
  if (typeof offered === 'string') merged.set('authorization', offered);
  return new Request('http://gateway/graphql', { method: 'POST', headers: merged });
}

/**
 * A browser page may open a socket to any address, with no CORS preflight: only the pages CORS
 * lets read an answer (isAllowedPage), or pages of the gateway's own names (ALLOWED_HOSTS, any
 * port: GraphiQL, which HTTP lets in as same-origin), may. Never compared with the request's
 * `Host`: under DNS rebinding the attacker's page names both. Clients that are not browsers send no Origin.
 */
function allowedOrigin(origin: string | undefined, options: WebSocketOptions): boolean {
  if (origin === undefined) return true;
  // CORS's allowance for local development (any port of localhost) is not a socket's: this
  // machine's pages open one when localhost is one of the gateway's own names.
  if (isAllowedPage(origin, { ...options.pages, localDevelopment: false })) return true;
  try {
    const url = new URL(origin);
    const name = hostNameOf(url.host);
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      name !== undefined &&
      options.allowedHosts.includes(name)
    );
  } catch {
    return false;
  }
}

/**
 * A message over SCAN_TEXT_FROM_BYTES whose payload passes MAX_INPUT_DEPTH or MAX_INPUT_NODES closes
 * the socket with 4400 naming the bound, as a `connection_init` past them does, before graphql-ws
 * parses it (parsing 100,000 members alone takes longer than refusing them should), as HTTP measures
 * a large body's text before parsing it. Smaller messages are measured once parsed, in the pipeline
 * (an `error` for their operation). Registered before graphql-ws's own `connection` listener, this
 * wraps the `message` listener it then adds.
 */
function measureMessages(socket: WebSocket, bounds: InputBounds): void {
  const on = socket.on.bind(socket) as (event: string, listener: (...args: unknown[]) => void) => WebSocket;
  socket.on = ((event: string, listener: (...args: unknown[]) => void) => {
    if (event !== 'message') return on(event, listener);
    return on('message', (data, isBinary) => {
      const raw = data as RawData;
      const bytes = Buffer.isBuffer(raw) ? raw : Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw);
      if (bytes.length > SCAN_TEXT_FROM_BYTES) {
        const text = bytes.toString();
        // Named as the parsed payload would be (onConnect, the pipeline's input bounds).
        const what = /"type"\s*:\s*"connection_init"/.test(text) ? 'connection_init payload' : 'request body';
        const problem = jsonTextProblem(text, bounds, what, 2);
        if (problem) return socket.close(CloseCode.BadRequest, problem.summary);
      }
      listener(data, isBinary);
    });
  }) as WebSocket['on'];
}

/**
 * graphql-ws serialises each message whole: a payload written from kept JSON (a shared
 * subscription's, operations/kept-json.ts) stands in it as a mark, and its JSON, serialised once
 * for every socket, is spliced in as the message is sent, which graphql-ws does right after
 * serialising it (nothing runs in between).
 */
class KeptPayloads {
  readonly #mark = `kept-json:${randomUUID()}`;
  /** graphql-ws writes `{id, type, payload}`: the payload is the message's end. */
  readonly #tail = `"payload":"${this.#mark}"}`;
  #json: string | undefined;

  readonly replacer = (key: string, value: unknown): unknown => {
    if (key !== 'payload' || !isWrittenFromKeptJson(value)) return value;
    this.#json = stringifyKept(value);
    return this.#mark;
  };

  spliceInto(socket: WebSocket): void {
    const send = socket.send.bind(socket) as (data: unknown, ...rest: unknown[]) => void;
    socket.send = ((data: unknown, ...rest: unknown[]) => send(this.#spliced(data), ...rest)) as WebSocket['send'];
  }

  #spliced(message: unknown): unknown {
    const json = this.#json;
    if (json === undefined) return message;
    this.#json = undefined;
    if (typeof message !== 'string' || !message.endsWith(this.#tail)) return message;
    return `${message.slice(0, -this.#tail.length)}"payload":${json}}`;
  }
}

import type { Server } from 'node:http';
import { type ExecutionArgs, type ExecutionResult, GraphQLError, getOperationAST } from 'graphql';
import { CloseCode } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { createGraphQLError, isAsyncIterable } from 'graphql-yoga';
import type { Logger } from 'pino';
import { type RawData, type WebSocket, WebSocketServer } from 'ws';
import { atTime, expiredError } from '../auth/credential-expiry.ts';
import type { RequestPrincipals } from '../auth/plugin.ts';
import { hasExpired, type Principal } from '../auth/principal.ts';
import type { Authenticator } from '../auth/verdict.ts';
import type { InputBounds } from '../config/environment.ts';
import type { TrustedDocuments } from '../config/trusted-documents.ts';
import { ErrorCode } from '../error-codes.ts';
import type { Gateway } from '../gateway.ts';
import {
  type AuditLogger,
  errorCodesOf,
  logOperation,
  type OperationRecord,
  type OperationRecords,
  shownResult,
} from '../observability/audit.ts';
import { type PersistedQueryStore, persistedQueryOf } from '../operations/automatic-persisted-queries.ts';
import { maskError } from '../operations/mask-error.ts';
import { trustedDocumentOf } from '../operations/trusted-documents.ts';
import { hostNameOf, isAllowedHost } from './hosts.ts';
import { inputBoundsError, inputBoundsProblem, jsonTextProblem, SCAN_TEXT_FROM_BYTES } from './input-bounds.ts';

export interface WebSocketTransport {
  /** Sockets open now (tests: a client that left leaves none). */
  open(): number;
  close(): Promise<void>;
}

export interface WebSocketOptions {
  authenticate: Authenticator;
  principals: RequestPrincipals;
  corsOrigins: readonly string[];
  /** ALLOWED_HOSTS: the Host names the upgrade is answered for, and (with CORS_ORIGINS) the pages that may open a socket. */
  allowedHosts: readonly string[];
  /** MAX_REQUEST_BYTES: the longest message read. */
  maxMessageBytes: number;
  /** MAX_INPUT_DEPTH and MAX_INPUT_NODES: a `subscribe` payload past them gets an `error`, a `connection_init` one closes with 4400. */
  inputBounds: InputBounds;
  /** The audit trail's records and logger: an operation on a socket is logged like one over HTTP. */
  records: OperationRecords;
  auditLogger?: AuditLogger;
  /** With TRUSTED_DOCUMENTS_FILE: only these run, named by id. */
  trustedDocuments?: TrustedDocuments;
  /** Without it: automatic persisted queries, as over HTTP. */
  persistedQueries?: PersistedQueryStore;
  /** Live subscriptions one socket may hold (SUBSCRIPTIONS_PER_CLIENT). */
  subscriptionsPerSocket: number;
  /** SUBSCRIPTION_KEEPALIVE_MS: how often each socket is pinged (closed when its pong has not come by the next). */
  keepAliveMs: number;
  /** With ROUTER_HMAC_SECRET: rejects an operation the router did not sign (auth/router-signature.ts). */
  verifySignature?: (params: Payload) => Promise<void>;
  logger?: Logger;
}

interface Envelope {
  execute: (args: ExecutionArgs) => unknown;
  subscribe: (args: ExecutionArgs) => unknown;
}

/** What the door knows of one socket once its client is let in. */
interface Socket {
  principal: Principal;
  /** The live subscriptions' ids. */
  subscriptions: Set<string>;
  /** Cancels the close at the credential's expiry. */
  cancelExpiry: () => void;
}

type Payload = { query: string; operationName?: string | null; variables?: Record<string, unknown> | null } & Record<
  string,
  unknown
>;

/**
 * GraphQL over WebSocket (the graphql-ws protocol, as Apollo Client and urql speak it) at the same
 * path as HTTP, `/graphql`, through the same Yoga plugins as HTTP and SSE (Yoga's documented
 * graphql-ws integration: `getEnveloped` per operation), so limits, cost, scopes, credential expiry,
 * subscription caps and error masking are the same hooks on every door. What HTTP decides before
 * the envelope (trusted documents, the audit line, the response cache's extension) is asked here
 * of the same functions.
 *
 * The client proves who it is as on HTTP: an `Authorization` in the connection's init payload, or
 * else in the upgrade request's headers; a refused client is closed with 4403 before any operation
 * runs. A socket is closed with 4401 when its credential expires. Before any of that, the upgrade
 * is refused for a Host not in ALLOWED_HOSTS (421) or a page of an origin not allowed (403), and a
 * message longer than MAX_REQUEST_BYTES closes the socket (1009). A bad operation gets an `error`
 * message of its own, with the code HTTP would give; the socket and its other operations live on.
 */
export function serveWebSockets(
  server: Server,
  gateway: Pick<Gateway, 'yoga'>,
  options: WebSocketOptions,
): WebSocketTransport {
  const sockets = new WebSocketServer({
    server,
    path: gateway.yoga.graphqlEndpoint,
    // No message past MAX_REQUEST_BYTES is read, `connection_init` included: ws closes with 1009 on the announced length.
    maxPayload: options.maxMessageBytes,
    // The upgrade itself is refused (no socket opens) for a Host not in ALLOWED_HOSTS and a page of an origin not allowed.
    verifyClient: ({ req }, done) => {
      if (!isAllowedHost(req.headers.host, options.allowedHosts))
        return done(false, 421, 'This gateway does not answer for this host name (ALLOWED_HOSTS).');
      if (!allowedOrigin(req.headers.origin, options.corsOrigins, options.allowedHosts))
        return done(false, 403, 'Pages of this origin may not open a socket (CORS_ORIGINS).');
      done(true);
    },
  });
  const state = new WeakMap<object, Socket>();
  /** The audit record of each operation in flight, by socket and operation id. */
  const running = new WeakMap<object, Map<string, { record: OperationRecord; principal: Principal }>>();
  const logged = (extra: object, id: string, codes?: string[]) => {
    const operation = running.get(extra)?.get(id);
    if (!operation) return;
    running.get(extra)?.delete(id);
    operation.record.errorCodes = codes ?? operation.record.errorCodes ?? [];
    logOperation(options.auditLogger, options.records, operation.record, operation.principal, null);
  };
  // graphql-ws parses a message whole before any hook sees it: a large one is measured as text first.
  sockets.on('connection', (socket) => measureMessages(socket, options.inputBounds));
  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as Envelope).execute(args) as never,
      subscribe: (args) => (args.rootValue as Envelope).subscribe(args) as never,
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
        const { principal } = verdict;
        const close = () => ctx.extra.socket.close(CloseCode.Unauthorized, 'Unauthorized: the token has expired');
        const cancelExpiry = principal.expiresAt === undefined ? () => {} : atTime(principal.expiresAt, close);
        state.set(ctx.extra, { principal, subscriptions: new Set(), cancelExpiry });
        running.set(ctx.extra, new Map());
        return true;
      },
      onClose(ctx) {
        state.get(ctx.extra)?.cancelExpiry();
        for (const id of running.get(ctx.extra)?.keys() ?? []) logged(ctx.extra, id);
      },
      async onSubscribe(ctx, id, payload) {
        const socket = state.get(ctx.extra);
        if (!socket)
          return [createGraphQLError('Not authenticated.', { extensions: { code: ErrorCode.UNAUTHENTICATED } })];
        // Each operation gets a request of its own, as on HTTP: the context reads its principal from it.
        const request = requestOf(ctx.extra.request.headers, ctx.connectionParams);
        const record = options.records.start(request);
        running.get(ctx.extra)?.set(id, { record, principal: socket.principal });
        try {
          const args = await prepare(socket, request, id, payload as Payload, record);
          if (!Array.isArray(args)) return args;
          logged(ctx.extra, id, errorCodesOf([{ errors: args }]));
          return args.map(withoutHttp);
        } catch (error) {
          const masked = maskError(error, options.logger) as GraphQLError;
          logged(ctx.extra, id, errorCodesOf([{ errors: [masked] }]));
          return [withoutHttp(masked)];
        }
      },
      // The codes of every result sent, as HTTP records those of its one result.
      onNext(ctx, id, _payload, _args, result) {
        const record = running.get(ctx.extra)?.get(id)?.record;
        if (record)
          record.errorCodes = [
            ...new Set([...(record.errorCodes ?? []), ...errorCodesOf([result as ExecutionResult])]),
          ];
      },
      onComplete(ctx, id) {
        state.get(ctx.extra)?.subscriptions.delete(id);
        logged(ctx.extra, id);
      },
    },
    sockets,
    options.keepAliveMs,
  );

  /** The operation's execution arguments, or the errors that refuse it. */
  async function prepare(
    socket: Socket,
    request: Request,
    id: string,
    payload: Payload,
    record: OperationRecord,
  ): Promise<ExecutionArgs | readonly GraphQLError[]> {
    // As HTTP does once a body is parsed: before anything (persisted queries, cost, coercion) reads the payload.
    const tooLarge = inputBoundsError(payload, options.inputBounds);
    if (tooLarge) return [tooLarge];
    if (hasExpired(socket.principal)) return [expiredError()];
    // As HTTP's onParams: before the document is looked up or parsed.
    await options.verifySignature?.(payload);
    options.principals.set(request, socket.principal);
    const query = options.trustedDocuments
      ? trustedDocumentOf(options.trustedDocuments, payload)
      : options.persistedQueries
        ? ((await persistedQueryOf(options.persistedQueries, socket.principal.licenseeId, payload)) ?? payload.query)
        : payload.query;
    const params = { ...payload, query };
    const { schema, execute, subscribe, contextFactory, parse, validate } = gateway.yoga.getEnveloped({
      request,
      params,
    });
    let document: ReturnType<typeof parse>;
    try {
      document = parse(query);
    } catch (error) {
      // graphql-js' syntax errors carry no code; HTTP answers them with this one.
      if (error instanceof GraphQLError && !error.extensions.code)
        return [withCode(error, ErrorCode.GRAPHQL_PARSE_FAILED)];
      throw error;
    }
    const errors: readonly GraphQLError[] = validate(schema, document);
    if (errors.length > 0)
      return errors.map((error) =>
        error.extensions.code ? error : withCode(error, ErrorCode.GRAPHQL_VALIDATION_FAILED),
      );
    const operation = getOperationAST(document, payload.operationName ?? undefined);
    if (operation?.operation === 'subscription') {
      if (socket.subscriptions.size >= options.subscriptionsPerSocket) {
        return [
          createGraphQLError(
            `This socket already has ${options.subscriptionsPerSocket} live subscriptions (SUBSCRIPTIONS_PER_CLIENT): complete one first.`,
            {
              extensions: { code: ErrorCode.RATE_LIMITED, limit: 'SUBSCRIPTIONS_PER_CLIENT' },
            },
          ),
        ];
      }
      socket.subscriptions.add(id);
    }
    const shown = (result: unknown) =>
      isAsyncIterable(result) ? result : shownResult(result as ExecutionResult, record);
    return {
      schema,
      operationName: payload.operationName ?? null,
      document,
      variableValues: payload.variables ?? null,
      contextValue: await contextFactory(),
      rootValue: {
        execute: async (args) => shown(await execute(args)),
        subscribe: (args) => subscribe(args),
      } satisfies Envelope,
    };
  }

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

/** An error as a socket sends it: Yoga's `extensions.http` (a status for HTTP answers) is HTTP's alone. */
function withoutHttp(error: GraphQLError): GraphQLError {
  if (!error.extensions?.http) return error;
  const { http: _http, ...extensions } = error.extensions;
  return withExtensions(error, extensions);
}

function withCode(error: GraphQLError, code: string): GraphQLError {
  return withExtensions(error, { ...error.extensions, code });
}

/** The same error (message, locations, path) with other extensions. */
function withExtensions(error: GraphQLError, extensions: GraphQLError['extensions']): GraphQLError {
  return new GraphQLError(error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
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
 * A browser page may open a socket to any address, with no CORS preflight: only pages of
 * CORS_ORIGINS, or of the gateway's own names (ALLOWED_HOSTS, any port: GraphiQL), may. Never
 * compared with the request's `Host`: under DNS rebinding the attacker's page names both.
 * Clients that are not browsers send no Origin.
 */
function allowedOrigin(
  origin: string | undefined,
  corsOrigins: readonly string[],
  allowedHosts: readonly string[],
): boolean {
  if (origin === undefined) return true;
  if (corsOrigins.includes(origin)) return true;
  try {
    const url = new URL(origin);
    const name = hostNameOf(url.host);
    return (url.protocol === 'http:' || url.protocol === 'https:') && name !== undefined && allowedHosts.includes(name);
  } catch {
    return false;
  }
}

/**
 * A message over SCAN_TEXT_FROM_BYTES whose payload passes MAX_INPUT_DEPTH or MAX_INPUT_NODES closes
 * the socket with 4400 naming the bound, as a `connection_init` past them does, before graphql-ws
 * parses it (parsing 100,000 members alone takes longer than refusing them should). Smaller messages
 * are measured once parsed, and refused with an `error` for their operation (`prepare`). Registered
 * before graphql-ws's own `connection` listener, this wraps the `message` listener it then adds.
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
        // Named as the parsed payload would be (onConnect, prepare).
        const what = /"type"\s*:\s*"connection_init"/.test(text) ? 'connection_init payload' : 'request body';
        const problem = jsonTextProblem(text, bounds, what, 2);
        if (problem) return socket.close(CloseCode.BadRequest, problem.summary);
      }
      listener(data, isBinary);
    });
  }) as WebSocket['on'];
}

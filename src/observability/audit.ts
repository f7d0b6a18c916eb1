import { randomFillSync } from 'node:crypto';
import { type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Principal } from '../auth/principal.ts';
import { ErrorCode } from '../error-codes.ts';
import { isBatchOfOperations } from '../operations/batching.ts';
import { estimateUpstreamCalls } from '../operations/cost.ts';
import { withoutCacheMetadata } from '../operations/response-cache/metadata.ts';

/**
 * The audit trail (docs/operating.md, "Audit trail"), without personal data: one info line per GraphQL
 * operation with who asked (client, licensee), what (operation name), what it cost (upstream
 * requests sent, duration) and how it ended (error codes). Never a variable's value, a key or a
 * token: the line is built from these fields only, nothing of the request is copied in whole.
 */

/** What the audit learns of one request while it runs. */
export interface OperationRecord {
  requestId: string;
  startedAt: number;
  /** The client's X-Show-Cost: 1 asks for the cost in the response's extensions. */
  showCost: boolean;
  /** Upstream requests actually sent for this operation (cache hits and shared calls are not). */
  upstreamCalls: number;
  estimatedCalls?: number;
  operationName?: string;
  /** Set once Yoga produced a GraphQL result: only then is the request an operation to log. */
  errorCodes?: string[];
  /** Its place in a batch (a JSON array of operations): each operation of a batch has its own record and line. */
  batchIndex?: number;
  /** A batch's request whose operations were each answered: logged as their lines, not its own. */
  batchAnswered?: boolean;
}

/** A client's request id is kept only if it is a short token of safe characters (it goes into logs and headers). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Operation names are the client's words too: logged, but bounded. */
const LONGEST_OPERATION_NAME = 100;

export interface AuditLogger {
  info(details: object, message: string): void;
}

export interface AuditOptions {
  logger?: AuditLogger;
  /** Who the request acts for, once authenticated (undefined before, or when refused). */
  principalOf(request: Request): Principal | undefined;
}

/** The records of requests in flight, for the context to count upstream requests into. */
export class OperationRecords {
  private readonly byRequest = new WeakMap<Request, OperationRecord>();
  /** A batch's records, in the batch's order. */
  private readonly batches = new WeakMap<Request, OperationRecord[]>();
  /** A batch's parameters, then its operations' contexts → their records. */
  private readonly byOperation = new WeakMap<object, OperationRecord>();

  /** `now` is the clock of durations (tests move it). */
  constructor(private readonly now: () => number = Date.now) {}

  start(request: Request): OperationRecord {
    const offered = request.headers.get('x-request-id');
    const record: OperationRecord = {
      requestId: offered !== null && SANE_REQUEST_ID.test(offered) ? offered : generatedRequestId(),
      startedAt: this.now(),
      showCost: request.headers.get('x-show-cost') === '1',
      upstreamCalls: 0,
    };
    this.byRequest.set(request, record);
    return record;
  }

  of(request: Request): OperationRecord {
    return this.byRequest.get(request) ?? this.start(request);
  }

  /** One record per operation of a batch (`params`, as parsed), sharing the request's id and start. */
  startBatch(request: Request, params: readonly object[]): void {
    const request_ = this.of(request);
    const entries = params.map((one, batchIndex) => {
      const record: OperationRecord = { ...request_, upstreamCalls: 0, batchIndex };
      this.byOperation.set(one, record);
      return record;
    });
    this.batches.set(request, entries);
  }

  /** The operation of a batch these parameters (as parsed) are, now running with this context. */
  bind(params: object, context: object): void {
    const record = this.byOperation.get(params);
    if (record) this.byOperation.set(context, record);
  }

  /** The record of the operation running with this context: its own in a batch, else its request's. */
  ofOperation(context: object, request: Request): OperationRecord {
    return this.byOperation.get(context) ?? this.of(request);
  }

  batchOf(request: Request): OperationRecord[] | undefined {
    return this.batches.get(request);
  }

  elapsedMs(record: OperationRecord): number {
    return Math.round(this.now() - record.startedAt);
  }
}

/**
 * Gives every response an X-Request-Id and logs one audit line per operation. Goes first among the
 * plugins, so that refusals of the later ones (401, 403, limits) are logged and carry the id too;
 * the result it logs is read by `useAuditResult`, which goes last.
 */
export function useAuditTrail(records: OperationRecords, options: AuditOptions): Plugin {
  return {
    onRequest({ request }) {
      records.start(request);
    },
    onRequestParse({ request }) {
      return {
        onRequestParseDone({ requestParserResult }) {
          // A batch holding anything but operations is refused whole (operations/batching.ts), unaudited per element.
          if (Array.isArray(requestParserResult) && isBatchOfOperations(requestParserResult))
            records.startBatch(request, requestParserResult);
        },
      };
    },
    // First among the plugins: the parameters are still those parsed (later plugins may replace them).
    onParams({ params, context }) {
      records.bind(params, context);
    },
    // Named at validation, so that an operation refused there is logged with its name.
    onValidate({ params, context }) {
      const { request, params: sent } = context as { request: Request; params?: { operationName?: string } };
      const name = getOperationAST(params.documentAST, sent?.operationName)?.name?.value;
      if (name) records.ofOperation(context, request).operationName = name.slice(0, LONGEST_OPERATION_NAME);
    },
    onExecute({ args }) {
      const context = args.contextValue as { request: Request };
      const record = records.ofOperation(context, context.request);
      if (record.showCost)
        record.estimatedCalls = estimateUpstreamCalls(
          args.document,
          (args.variableValues ?? {}) as Record<string, unknown>,
          args.operationName,
        );
    },
    onResponse({ request, response }) {
      const record = records.of(request);
      response.headers.set('x-request-id', record.requestId);
      if (record.errorCodes === undefined) return; // GraphiQL's page, /health, /ready: no operation
      const principal = options.principalOf(request);
      // A batch answered operation by operation: a line each (a batch refused whole has the request's line).
      const batch = record.batchAnswered ? records.batchOf(request) : undefined;
      for (const one of batch ?? [record]) logOperation(options.logger, records, one, principal, response.status);
    },
  };
}

/**
 * The audit line of one operation, the same on every door: `status` is the HTTP status, null for
 * an operation on a WebSocket (the socket's upgrade was the HTTP exchange).
 */
export function logOperation(
  logger: AuditLogger | undefined,
  records: OperationRecords,
  record: OperationRecord,
  principal: Principal | undefined,
  status: number | null,
): void {
  logger?.info(
    {
      requestId: record.requestId,
      client: principal?.client ?? null,
      licensee: principal?.licenseeId ?? null,
      operation: record.operationName ?? null,
      upstreamCalls: record.upstreamCalls,
      durationMs: records.elapsedMs(record),
      status,
      errors: record.errorCodes ?? [],
      ...(record.batchIndex === undefined ? {} : { batchIndex: record.batchIndex }),
    },
    'operation',
  );
}

/** The error codes of results as the client receives them (an error without a code is masked). */
export function errorCodesOf(results: readonly ExecutionResult[]): string[] {
  return results.flatMap((one) =>
    (one.errors ?? []).map((error) => String(error.extensions?.code ?? ErrorCode.INTERNAL_SERVER_ERROR)),
  );
}

/**
 * A result as the client may see it: with X-Show-Cost: 1 its upstream calls and estimate, and the
 * response cache's hit or miss; without it, neither. Every door answers through it.
 */
export function shownResult<R extends ExecutionResult>(result: R, record: OperationRecord): R {
  return record.showCost ? withCost(result, record) : withoutCacheMetadata(result);
}

/**
 * Records the error codes of the result as the client receives it and, with X-Show-Cost: 1, puts
 * `upstreamCalls` and `estimatedCalls` into its extensions (and leaves the response cache's
 * `responseCache`; without the header that one is removed). Goes last among the plugins: result
 * hooks run in plugin order, and earlier ones still change codes (useReadableHttpErrors gives
 * graphql-js's variable errors BAD_USER_INPUT), so a first plugin would log codes nobody received.
 */
export function useAuditResult(records: OperationRecords): Plugin {
  return {
    onResultProcess({ request, result, setResult }) {
      const record = records.of(request);
      // A stream's results are not known here; its line carries no error codes.
      if (Symbol.asyncIterator in result) return void (record.errorCodes = []);
      const results = Array.isArray(result) ? result : [result];
      record.errorCodes = errorCodesOf(results);
      const batch = Array.isArray(result) ? records.batchOf(request) : undefined;
      if (batch && batch.length === results.length) {
        record.batchAnswered = true;
        batch.forEach((one, i) => void (one.errorCodes = errorCodesOf([results[i]!])));
        setResult(results.map((one, i) => shownResult(one, batch[i]!)));
        return;
      }
      if (Array.isArray(result)) return;
      // The response cache's hit or miss is part of the cost: shown to the clients that ask for it only.
      const shown = shownResult(result, record);
      if (shown !== result) setResult(shown);
    },
  };
}

/** Random bytes drawn 4 KiB at a time: a synchronous draw per request cost about 2 % of a cached answer's CPU. */
const idBytes = Buffer.alloc(4096);
let idOffset = idBytes.length;

/**
 * 96 random bits as 24 hex digits: unique enough to find one request's lines, and short of the
 * 32-character runs a secret scan takes for a token or a key.
 */
function generatedRequestId(): string {
  if (idOffset + 12 > idBytes.length) {
    randomFillSync(idBytes);
    idOffset = 0;
  }
  idOffset += 12;
  return idBytes.toString('hex', idOffset - 12, idOffset);
}

function withCost<R extends ExecutionResult>(result: R, record: OperationRecord): R {
  return {
    ...result,
    extensions: {
      ...result.extensions,
      upstreamCalls: record.upstreamCalls,
      estimatedCalls: record.estimatedCalls ?? 0,
    },
  };
}

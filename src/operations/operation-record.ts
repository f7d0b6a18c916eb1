import { randomFillSync } from 'node:crypto';
import { type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ErrorCode } from '../error-codes.ts';
import { isBatchOfOperations } from './batching.ts';
import { estimateUpstreamCalls } from './cost.ts';
import { withoutCacheMetadata } from './response-cache/metadata.ts';

/**
 * What the gateway learns of one operation while it runs, on every door: who may quote it (its
 * request id), what it cost (upstream requests sent, the estimate), what it was (name and type) and
 * how it ended (the error codes its client received). The audit trail and the metrics read it; the
 * resolvers' context counts upstream requests into it. Nothing of the request is copied in whole.
 */
export interface OperationRecord {
  requestId: string;
  startedAt: number;
  /** The client's X-Show-Cost: 1 asks for the cost in the response's extensions. */
  showCost: boolean;
  /** Answered in an HTTP response (its status known once sent); false on a WebSocket. */
  overHttp: boolean;
  /** Upstream requests actually sent for this operation (cache hits and shared calls are not). */
  upstreamCalls: number;
  estimatedCalls?: number;
  /** The operation's name as sent (bounded), once its document is valid. */
  operationName?: string;
  /** query, mutation or subscription, once its document is valid. */
  operationType?: string;
  /** Set once the operation has a result: only then is it an operation to log and count. */
  errorCodes?: string[];
  /** Its place in a batch (a JSON array of operations): each operation of a batch has its own record. */
  batchIndex?: number;
  /** A batch's request whose operations were each answered: logged as their lines, not its own. */
  batchAnswered?: boolean;
}

/** A client's request id is kept only if it is a short token of safe characters (it goes into logs and headers). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Operation names are the client's words too: logged, but bounded. */
const LONGEST_OPERATION_NAME = 100;

/** The records of operations in flight, by request and (for a batch's operations) by context. */
export class OperationRecords {
  private readonly byRequest = new WeakMap<Request, OperationRecord>();
  /** A batch's records, in the batch's order. */
  private readonly batches = new WeakMap<Request, OperationRecord[]>();
  /** A batch's parameters, then its operations' contexts → their records. */
  private readonly byOperation = new WeakMap<object, OperationRecord>();

  /** `now` is the clock of durations (tests move it). */
  constructor(private readonly now: () => number = Date.now) {}

  /** The record of a request: from its headers (X-Request-Id, X-Show-Cost), made when first asked for. */
  of(request: Request, overHttp = false): OperationRecord {
    const known = this.byRequest.get(request);
    if (known) return known;
    const offered = request.headers.get('x-request-id');
    const record: OperationRecord = {
      requestId: offered !== null && SANE_REQUEST_ID.test(offered) ? offered : generatedRequestId(),
      startedAt: this.now(),
      showCost: request.headers.get('x-show-cost') === '1',
      overHttp,
      upstreamCalls: 0,
    };
    this.byRequest.set(request, record);
    return record;
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
 * Makes and fills the records, on every door. Goes first among the plugins: an HTTP request's record
 * starts with the request, so that refusals of the later plugins (401, 403, limits) have one too;
 * an operation on a socket gets its record when its parameters arrive.
 */
export function useOperationRecords(records: OperationRecords): Plugin {
  return {
    onRequest({ request }) {
      records.of(request, true);
    },
    onRequestParse({ request }) {
      return {
        onRequestParseDone({ requestParserResult }) {
          // A batch holding anything but operations is refused whole (operations/batching.ts), one record.
          if (Array.isArray(requestParserResult) && isBatchOfOperations(requestParserResult))
            records.startBatch(request, requestParserResult);
        },
      };
    },
    // First among the plugins: the parameters are still those parsed (later plugins may replace them).
    onParams({ params, request, context }) {
      records.bind(params, context);
      records.ofOperation(context, request);
    },
    // Named at validation, so that an operation refused there is logged and counted with its name.
    onValidate({ params, context }) {
      const { request, params: sent } = context as { request: Request; params?: { operationName?: string } };
      const operation = getOperationAST(params.documentAST, sent?.operationName);
      const record = records.ofOperation(context, request);
      const name = operation?.name?.value;
      if (name) record.operationName = name.slice(0, LONGEST_OPERATION_NAME);
      if (operation) record.operationType = operation.operation;
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
  };
}

/**
 * Records the error codes of each result as its client receives it and, with X-Show-Cost: 1, puts
 * `upstreamCalls` and `estimatedCalls` into its extensions (and leaves the response cache's
 * `responseCache`; without the header that one is removed), on every door. Goes after every plugin
 * that changes a result's errors (result hooks run in plugin order): an earlier place would record
 * codes nobody received. A result made before any operation ran (a request HTTP could not read)
 * is recorded as the request's, once it is processed.
 */
export function useOperationResults(records: OperationRecords): Plugin {
  return {
    onExecutionResult({ request, context, result, setResult }) {
      if (!result) return;
      const record = records.ofOperation(context, request);
      // A stream's codes are each payload's: the audit and the metrics read them as it goes.
      if (Symbol.asyncIterator in result) return void (record.errorCodes ??= []);
      record.errorCodes = errorCodesOf([result as ExecutionResult]);
      const shown = shownResult(result as ExecutionResult, record);
      if (shown !== result) setResult(shown);
    },
    onResultProcess({ request, result }) {
      const record = records.of(request);
      if (Symbol.asyncIterator in result) return void (record.errorCodes ??= []);
      const results = Array.isArray(result) ? result : [result];
      const batch = Array.isArray(result) ? records.batchOf(request) : undefined;
      // A batch whose operations each ran is logged and counted as its operations; else as one request.
      if (batch && batch.length === results.length && batch.every((one) => one.errorCodes !== undefined))
        record.batchAnswered = true;
      record.errorCodes ??= errorCodesOf(results);
    },
  };
}

/** The error codes of results as the client receives them (an error without a code is masked). */
export function errorCodesOf(results: readonly ExecutionResult[]): string[] {
  return results.flatMap((one) =>
    (one.errors ?? []).map((error) => String(error.extensions?.code ?? ErrorCode.INTERNAL_SERVER_ERROR)),
  );
}

/**
 * A result as the client may see it: with X-Show-Cost: 1 its upstream calls and estimate, and the
 * response cache's hit or miss; without it, neither.
 */
export function shownResult<R extends ExecutionResult>(result: R, record: OperationRecord): R {
  return record.showCost ? withCost(result, record) : withoutCacheMetadata(result);
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

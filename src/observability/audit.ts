import type { ExecutionResult } from 'graphql';
import { mapAsyncIterator, type Plugin } from 'graphql-yoga';
import type { Principal } from '../auth/principal.ts';
import { errorCodesOf, type OperationRecord, type OperationRecords } from '../operations/operation-record.ts';
import { whenEnded } from '../operations/streams.ts';

/**
 * The audit trail (docs/operating.md, "Audit trail"), without personal data: one info line per GraphQL
 * operation with who asked (client, licensee), what (operation name), what it cost (upstream
 * requests sent, duration) and how it ended (error codes), read from the operation's record
 * (operations/operation-record.ts). Never a variable's value, a key or a token: the line is built
 * from these fields only, nothing of the request is copied in whole.
 */

export interface AuditLogger {
  info(details: object, message: string): void;
}

export interface AuditOptions {
  logger?: AuditLogger;
  /** Who the request acts for, once authenticated (undefined before, or when refused). */
  principalOf(request: Request): Principal | undefined;
}

/**
 * Gives every HTTP response an X-Request-Id and logs one audit line per operation: over HTTP when
 * its response is sent (with its status), on a socket when the operation ends (a stream's line
 * carries the codes of every payload sent). Reads the codes useOperationResults recorded, so it
 * goes after that plugin.
 */
export function useAuditTrail(records: OperationRecords, options: AuditOptions): Plugin {
  const log = (record: OperationRecord, request: Request, status: number | null) =>
    logOperation(options.logger, records, record, options.principalOf(request), status);
  return {
    onExecutionResult({ request, context, result, setResult }) {
      if (!result) return;
      const record = records.ofOperation(context, request);
      if (record.overHttp) return;
      if (!(Symbol.asyncIterator in result)) return log(record, request, null);
      const codes = (record.errorCodes ??= []);
      const payloads = mapAsyncIterator(result as AsyncIterable<ExecutionResult>, (payload) => {
        for (const code of errorCodesOf([payload])) if (!codes.includes(code)) codes.push(code);
        return payload;
      });
      setResult(whenEnded(payloads, () => log(record, request, null)));
    },
    onResponse({ request, response }) {
      const record = records.of(request);
      response.headers.set('x-request-id', record.requestId);
      if (record.errorCodes === undefined) return; // GraphiQL's page, /health, /ready: no operation
      // A batch answered operation by operation: a line each (a batch refused whole has the request's line).
      const batch = record.batchAnswered ? records.batchOf(request) : undefined;
      for (const one of batch ?? [record]) log(one, request, response.status);
    },
  };
}

/**
 * The audit line of one operation, the same on every door: `status` is the HTTP status, null for
 * an operation on a WebSocket (the socket's upgrade was the HTTP exchange).
 */
function logOperation(
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

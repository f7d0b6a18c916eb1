import { getOperationAST, type DocumentNode } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { GatewayMetrics } from './gateway-metrics.ts';
import { ErrorCode } from '../../error-codes.ts';

interface OperationSeen {
  startedAt: number;
  name: string;
  type: string;
}

/** Operation names become labels: a bounded set of plain names, the rest are `other`. */
const MAX_OPERATION_NAMES = 200;
const PLAIN_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,63}$/;

/**
 * `/metrics` in Prometheus' text format, and the GraphQL side of the metrics: each operation by
 * name, type and outcome with its duration, and each error code answered (the refusals).
 */
export function useMetrics(metrics: GatewayMetrics): Plugin {
  const seen = new WeakMap<Request, OperationSeen>();
  const names = new Set<string>();
  const labelOf = (name: string | null | undefined) => {
    if (!name) return 'anonymous';
    if (!PLAIN_NAME.test(name)) return 'other';
    if (names.has(name) || names.size < MAX_OPERATION_NAMES) return names.add(name), name;
    return 'other';
  };
  const noteOperation = (request: Request | undefined, document: DocumentNode, operationName: string | null | undefined) => {
    const record = request && seen.get(request);
    if (!record) return;
    const operation = getOperationAST(document, operationName);
    record.name = labelOf(operation?.name?.value ?? operationName);
    record.type = operation?.operation ?? 'unknown';
  };
  return {
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (url.pathname === '/metrics') {
        return endResponse(new fetchAPI.Response(await metrics.registry.metrics(), { headers: { 'content-type': metrics.registry.contentType } }));
      }
      seen.set(request, { startedAt: performance.now(), name: 'unknown', type: 'unknown' });
    },
    onExecute({ args }) {
      noteOperation((args.contextValue as { request?: Request }).request, args.document, args.operationName);
    },
    onSubscribe({ args }) {
      noteOperation((args.contextValue as { request?: Request }).request, args.document, args.operationName);
    },
    onResultProcess({ request, result }) {
      const record = seen.get(request);
      if (!record) return;
      seen.delete(request);
      const labels = { operation: record.name, type: record.type };
      metrics.operationDuration.observe(labels, (performance.now() - record.startedAt) / 1000);
      if (isAsyncIterable(result)) return void metrics.operations.inc({ ...labels, outcome: 'stream' });
      const codes = (Array.isArray(result) ? result : [result]).flatMap((one) => (one.errors ?? []).map((error) => String(error.extensions?.code ?? ErrorCode.INTERNAL_SERVER_ERROR)));
      metrics.operations.inc({ ...labels, outcome: codes[0] ?? 'ok' });
      for (const code of codes) metrics.refusals.inc({ code });
    },
  };
}

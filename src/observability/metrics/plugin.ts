import { Kind, parse } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { OperationRecord, OperationRecords } from '../../operations/operation-record.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';

/**
 * The operation names counted under their own label: those of the trusted documents and of
 * OPERATION_NAMES. Any other name is the client's word, `other`: first come, first labelled let the
 * first names any client sent take every label for good (and a label's series is never freed).
 */
export function labelledOperationNames(
  allowList: readonly string[],
  trustedDocuments: Iterable<string> = [],
): Set<string> {
  const names = new Set(allowList);
  for (const text of trustedDocuments) {
    for (const definition of parse(text, { noLocation: true }).definitions) {
      if (definition.kind === Kind.OPERATION_DEFINITION && definition.name) names.add(definition.name.value);
    }
  }
  return names;
}

/** Paths that become a label of gateway_http_responses_total; any other is `other` (a client picks the path). */
const KNOWN_PATHS = new Set(['/graphql', '/health', '/ready', '/metrics', '/status', '/status.json']);

const pathLabel = (pathname: string) => (KNOWN_PATHS.has(pathname) ? pathname : 'other');

/** `/metrics` in Prometheus' text format, on the operators' port; each answer there counted by path and status. */
export function useMetricsPage(metrics: GatewayMetrics): Plugin {
  return {
    // Not async: a hook that returns a promise makes every request wait a turn for it.
    onRequest({ url, endResponse, fetchAPI }) {
      if (url.pathname !== '/metrics') return;
      return metrics.registry
        .metrics()
        .then((text) =>
          endResponse(new fetchAPI.Response(text, { headers: { 'content-type': metrics.registry.contentType } })),
        );
    },
    onResponse({ request, response }) {
      metrics.httpResponses.inc({ path: pathLabel(new URL(request.url).pathname), status: String(response.status) });
    },
  };
}

/**
 * The GraphQL side of the metrics, on the clients' port: each operation by name (see
 * labelledOperationNames), type and outcome with its duration, and each error code answered (the
 * refusals), on every door, read from the operation's record once its result is known (so it goes
 * after useOperationResults); and each HTTP answer by path and status. A request HTTP could not read
 * (no operation ran) is counted once, as `unknown`.
 */
export function useMetrics(
  metrics: GatewayMetrics,
  operationNames: ReadonlySet<string>,
  records: OperationRecords,
): Plugin {
  const counted = new WeakSet<OperationRecord>();
  const count = (record: OperationRecord, outcome: string | undefined, codes: readonly string[]) => {
    if (counted.has(record)) return;
    counted.add(record);
    const type = record.operationType ?? 'unknown';
    const name = record.operationType === undefined ? 'unknown' : labelOf(record.operationName);
    const labels = { operation: name, type };
    metrics.operationDuration.observe(labels, records.elapsedMs(record) / 1000);
    metrics.operations.inc({ ...labels, outcome: outcome ?? codes[0] ?? 'ok' });
    for (const code of codes) metrics.refusals.inc({ code });
  };
  const labelOf = (name: string | undefined) => (!name ? 'anonymous' : operationNames.has(name) ? name : 'other');
  /** Each request's path label, from the URL Yoga parsed already (a response made before this plugin's turn parses its own). */
  const paths = new WeakMap<Request, string>();
  return {
    onRequest({ request, url }) {
      paths.set(request, pathLabel(url.pathname));
    },
    onResponse({ request, response }) {
      const path = paths.get(request) ?? pathLabel(new URL(request.url).pathname);
      metrics.httpResponses.inc({ path, status: String(response.status) });
    },
    onExecutionResult({ request, context, result }) {
      if (!result) return;
      const record = records.ofOperation(context, request);
      if (Symbol.asyncIterator in result) count(record, 'stream', []);
      else count(record, undefined, record.errorCodes ?? []);
    },
    onResultProcess({ request, result }) {
      const record = records.of(request);
      if (record.batchAnswered || Symbol.asyncIterator in result) return;
      count(record, undefined, record.errorCodes ?? []);
    },
  };
}

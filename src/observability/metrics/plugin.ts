import { type DocumentNode, getOperationAST, Kind, parse } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { ErrorCode } from '../../error-codes.ts';
import type { GatewayMetrics } from './gateway-metrics.ts';

interface OperationSeen {
  startedAt: number;
  name: string;
  type: string;
  /** The `path` label of the response (read from the URL Yoga parsed already). */
  path: string;
  /** Whether the operation was counted (once, when its result is processed). */
  counted: boolean;
}

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
 * labelledOperationNames), type and outcome with its duration, each error code answered (the
 * refusals), and each HTTP answer by path and status.
 */
export function useMetrics(metrics: GatewayMetrics, operationNames: ReadonlySet<string>): Plugin {
  const seen = new WeakMap<Request, OperationSeen>();
  const labelOf = (name: string | null | undefined) =>
    !name ? 'anonymous' : operationNames.has(name) ? name : 'other';
  const noteOperation = (
    request: Request | undefined,
    document: DocumentNode,
    operationName: string | null | undefined,
  ) => {
    const record = request && seen.get(request);
    if (!record) return;
    const operation = getOperationAST(document, operationName);
    record.name = labelOf(operation?.name?.value ?? operationName);
    record.type = operation?.operation ?? 'unknown';
  };
  return {
    // Not async: a hook that returns a promise makes every request wait a turn for it.
    onRequest({ request, url }) {
      seen.set(request, {
        startedAt: performance.now(),
        name: 'unknown',
        type: 'unknown',
        path: pathLabel(url.pathname),
        counted: false,
      });
    },
    onResponse({ request, response }) {
      // Answers made before onRequest reached this plugin (probes, refusals) have no record.
      const path = seen.get(request)?.path ?? pathLabel(new URL(request.url).pathname);
      metrics.httpResponses.inc({ path, status: String(response.status) });
    },
    onExecute({ args }) {
      noteOperation((args.contextValue as { request?: Request }).request, args.document, args.operationName);
    },
    onSubscribe({ args }) {
      noteOperation((args.contextValue as { request?: Request }).request, args.document, args.operationName);
    },
    onResultProcess({ request, result }) {
      const record = seen.get(request);
      if (!record || record.counted) return;
      record.counted = true;
      const labels = { operation: record.name, type: record.type };
      metrics.operationDuration.observe(labels, (performance.now() - record.startedAt) / 1000);
      if (isAsyncIterable(result)) return void metrics.operations.inc({ ...labels, outcome: 'stream' });
      const codes = (Array.isArray(result) ? result : [result]).flatMap((one) =>
        (one.errors ?? []).map((error) => String(error.extensions?.code ?? ErrorCode.INTERNAL_SERVER_ERROR)),
      );
      metrics.operations.inc({ ...labels, outcome: codes[0] ?? 'ok' });
      for (const code of codes) metrics.refusals.inc({ code });
    },
  };
}

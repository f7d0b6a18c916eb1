import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A router of Apollo's HTTP callback protocol 1.0, written from the protocol's text (Apollo Router's
 * docs, "HTTP Callback Protocol for GraphQL Subscriptions"): it receives `check`, `next` and
 * `complete` at `/callback/<id>`, records each with its headers, and answers 204 unless told
 * otherwise (`answer`), e.g. 404 once it has forgotten a subscription.
 */

export interface CallbackMessage {
  kind: string;
  action: 'check' | 'next' | 'complete';
  id: string;
  verifier: string;
  payload?: {
    data?: Record<string, unknown> | null;
    errors?: { message: string; extensions?: Record<string, unknown> }[];
  };
  errors?: { message: string; extensions?: Record<string, unknown> }[];
}

export interface Received {
  path: string;
  protocol: string | null;
  contentType: string | null;
  message: CallbackMessage;
}

export interface TestRouter {
  /** Its callback prefix: `http://127.0.0.1:<port>/callback`. */
  prefix: string;
  received: Received[];
  /** The status answered to each callback; 204 by default. */
  answer: (received: Received) => number;
  /** What arrived for one subscription id, of one action when given. */
  of(id: string, action?: CallbackMessage['action']): CallbackMessage[];
  /** The subscription request a router sends, for `id`, with `heartbeatIntervalMs`. */
  subscription(id: string, query: string, variables: Record<string, unknown>, heartbeatIntervalMs?: number): object;
  close(): Promise<void>;
}

export async function startTestRouter(): Promise<TestRouter> {
  const received: Received[] = [];
  const router: TestRouter = {
    prefix: '',
    received,
    answer: () => 204,
    of: (id, action) =>
      received.map((r) => r.message).filter((message) => message.id === id && (!action || message.action === action)),
    subscription: (id, query, variables, heartbeatIntervalMs = 0) => ({
      query,
      variables,
      extensions: {
        subscription: {
          callbackUrl: `${router.prefix}/${id}`,
          subscriptionId: id,
          verifier: `verifier-${id}`,
          heartbeatIntervalMs,
        },
      },
    }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => void (body += chunk.toString()));
    request.on('end', () => {
      const entry: Received = {
        path: request.url ?? '',
        protocol: request.headers['subscription-protocol'] as string | null,
        contentType: request.headers['content-type'] ?? null,
        message: JSON.parse(body) as CallbackMessage,
      };
      received.push(entry);
      response.writeHead(router.answer(entry)).end();
    });
  });
  server.keepAliveTimeout = 500;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  router.prefix = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  return router;
}

/** The Accept header of a router's subscription request (Hive Gateway's, charset included). */
export const CALLBACK_ACCEPT = 'application/json;callbackSpec=1.0; charset=utf-8';

import { request } from 'node:http';
import WebSocket from 'ws';

/** What an upgrade to graphql-ws got: an open socket, or the HTTP answer that refused it. */
export type Upgrade = { socket: WebSocket } | { status: number; body: string };

/** Opens a graphql-ws socket (subprotocol graphql-transport-ws) with these request headers (Host, Origin, …). */
export function openSocket(url: string, headers: Record<string, string> = {}): Promise<Upgrade> {
  const socket = new WebSocket(url, 'graphql-transport-ws', { headers });
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve({ socket }));
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    socket.once('error', reject);
  });
}

/** The socket's close code and reason, once it closes (errors of a connection the server cut are expected). */
export function closed(socket: WebSocket): Promise<{ code: number; reason: string }> {
  socket.on('error', () => {});
  return new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}

/** The next graphql-ws message the server sends. */
export function nextMessage(socket: WebSocket): Promise<{ type: string; id?: string; payload?: unknown }> {
  return new Promise((resolve) =>
    socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString()) as { type: string })),
  );
}

/** An HTTP/1.1 request with exactly these headers (Host included), over a real connection. */
export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

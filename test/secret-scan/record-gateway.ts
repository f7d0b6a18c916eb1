import type { ServerResponse } from 'node:http';
import type { Gateway } from '../../src/gateway.ts';
import { recordOutput } from './recorder.ts';

/**
 * A gateway whose every answer is recorded for the secret scan, headers and body, whether it is
 * asked through `fetch` (no socket) or served on a port, on either door (`yoga`, `operators`).
 * The answers themselves are untouched: the body is read from a clone.
 */
export function recordingGateway(gateway: Gateway): Gateway {
  // Both doors: the clients' and the operators' (/metrics, /status.json), where the most is shown.
  return { ...gateway, yoga: recording(gateway.yoga), operators: recording(gateway.operators) };
}

/** The Yoga instance with its answers recorded, over a socket (called as a listener) or through `fetch`. */
function recording<Door extends Gateway['yoga'] | Gateway['operators']>(door: Door): Door {
  return new Proxy(door, {
    apply(target, thisArg, args: unknown[]) {
      const res = args[1];
      if (isServerResponse(res)) recordNodeResponse(res);
      return Reflect.apply(target, thisArg, args) as unknown;
    },
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property === 'fetch') {
        const fetch = value as (...args: unknown[]) => Promise<Response>;
        return async (...args: unknown[]) => {
          const response = await fetch.apply(target, args);
          recordResponse(response);
          return response;
        };
      }
      // The adapter's methods expect the adapter itself as `this`, not the proxy.
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Records a fetch Response's headers now and its body once read (from a clone). */
export function recordResponse(response: Response): void {
  const headers = JSON.stringify([...response.headers]);
  response
    .clone()
    .text()
    .then(
      (body) => recordOutput('response', `${response.status} ${headers}\n${body}`),
      () => recordOutput('response', `${response.status} ${headers}`),
    );
}

const isServerResponse = (value: unknown): value is ServerResponse =>
  typeof value === 'object' && value !== null && typeof (value as ServerResponse).writeHead === 'function';

/** Collects what a Node handler writes (head and body) and records it when the answer ends. */
function recordNodeResponse(res: ServerResponse): void {
  const parts: string[] = [];
  const text = (chunk: unknown) =>
    typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : '';
  const { writeHead, write, end } = res;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    parts.push(JSON.stringify(args));
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['writeHead'];
  res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    parts.push(text(chunk));
    return (write as (...a: unknown[]) => boolean).apply(this, [chunk, ...rest]);
  } as ServerResponse['write'];
  res.end = function (this: ServerResponse, ...args: unknown[]) {
    if (typeof args[0] !== 'function') parts.push(text(args[0]));
    recordOutput('response', `${res.statusCode} ${JSON.stringify(res.getHeaders())}\n${parts.join('')}`);
    return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['end'];
}

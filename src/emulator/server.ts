import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_START } from './clock.ts';
import { handleControl } from './control.ts';
import { JsonText, objectMembers } from './json-members.ts';
import { clip, loggableParams } from './loggable.ts';
import { readParams, ServiceError } from './params.ts';
import { RawJson } from './raw-json.ts';
import type { Version } from './route.ts';
import { ROUTES } from './routes.ts';
import { EmulatorState, type LogEntry, type StateOptions } from './state.ts';
import { shapeBody } from './variations.ts';

export interface EmulatorOptions {
  port?: number;
  host?: string;
  seed?: number;
  /** The clock's start instant (ISO); 2027-01-15T12:00:00Z unless given. */
  now?: string;
  rateLimit?: number | false;
  rateWindowMs?: number;
  /** Real time for the rate limit, in ms; performance.now unless given (tests drive it). */
  rateNow?: () => number;
}

export interface Emulator {
  url: string;
  state: EmulatorState;
  server: Server;
  close(): Promise<void>;
}

const MAX_BODY = 1 << 20;
const API_PATH = /^\/api\/([^/]+)\/([^/?]+)\/?$/;
const VERSIONS = new Set(['v1', 'v101', 'v102']);

/** Starts the emulated reservation service; port 0 picks a free port. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const stateOptions: StateOptions = {
    seed: options.seed ?? 1,
    startMs: Date.parse(options.now ?? DEFAULT_START),
    rateLimit: options.rateLimit ?? 240,
    rateWindowMs: options.rateWindowMs ?? 60_000,
    rateNow: options.rateNow,
  };
  if (Number.isNaN(stateOptions.startMs)) throw new Error(`--now ${options.now} is not an ISO 8601 instant`);
  const state = new EmulatorState(stateOptions);
  let baseUrl = '';
  const server = createServer((req, res) => {
    handle(state, baseUrl, req, res).catch((error: unknown) => {
      // Never crash on a request: whatever escaped is the emulator's own fault, answered as 500.
      if (!res.headersSent)
        send(res, 500, { error: { code: 'INTERNAL', message: String((error as Error).message ?? error) } });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  baseUrl = `http://${host}:${address.port}`;
  return {
    url: baseUrl,
    state,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(state: EmulatorState, baseUrl: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // Every answer is dated by the service's own clock, as an HTTP server's Date header is: a client
  // learns from it where the service's "now" is (the emulator's clock is moved by tests).
  res.setHeader('date', new Date(state.clock.now()).toUTCString());
  const target = req.url ?? '/';
  const url = parseTarget(target);
  if (url?.pathname.startsWith('/_emulator/')) {
    const body = await readBody(req).catch(() => undefined);
    const result = handleControl(state, req.method ?? 'GET', url, body);
    send(res, result.status, result.body);
    return;
  }
  const path = url?.pathname ?? pathOf(target);
  const match = API_PATH.exec(path);
  const userAgent = req.headers['user-agent'];
  const entry: LogEntry = {
    at: new Date().toISOString(),
    version: match?.[1] ? clip(match[1]) : null,
    endpoint: clip(match?.[2] ?? path),
    status: 0,
    licensee: null,
    userAgent: userAgent ? clip(userAgent) : null,
    fault: null,
    params: {},
  };
  let raw: Record<string, unknown> = {};
  try {
    // The service's first rule (docs/upstream.md, "Transport"), checked before anything of the request is read.
    if (!userAgent) throw new ServiceError(403, 'FORBIDDEN', 'a User-Agent header is required');
    if (!url) throw new ServiceError(400, 'INVALID_PARAMETER', 'the request target is not a valid URL');
    if (!match) throw new ServiceError(404, 'NOT_FOUND', `unknown path ${clip(url.pathname)}`);
    raw = await readRequestParams(req, url);
    entry.params = loggableParams(withoutSecrets(raw));
    const version = match[1]! as Version;
    const name = match[2]!;
    const route = ROUTES.get(name);
    const known = VERSIONS.has(version) && (name === 'authenticate' || route?.versions.includes(version));
    if (!known) throw new ServiceError(404, 'NOT_FOUND', `${clip(name)} is not served under ${clip(version)}`);

    const fault = state.faults.draw(name);
    if (fault?.latencyMs) await sleep(fault.latencyMs);
    if (fault?.kind) {
      entry.fault = fault.kind;
      return injectFault(state, fault.kind, fault.errorStatus, req, res, entry);
    }

    if (name === 'authenticate') {
      const systemIdentifier = singleValue(raw.systemIdentifier);
      const licensee = systemIdentifier ? state.store.licensees.get(systemIdentifier) : undefined;
      if (licensee) {
        entry.licensee = licensee.systemIdentifier;
        countOrRefuse(state, licensee.systemIdentifier);
      }
      const p = readParams(
        raw,
        { key: { type: 'string', required: true }, systemIdentifier: { type: 'string', required: true } },
        'UTC',
      );
      if (!licensee || licensee.key !== p.key)
        throw new ServiceError(401, 'INVALID_CREDENTIALS', 'key and systemIdentifier do not match');
      return respond(state, res, entry, 200, { token: state.issueToken(licensee.systemIdentifier) });
    }

    if (isAbsent(raw.token)) throw new ServiceError(400, 'MISSING_PARAMETER', 'token is required', 'token');
    // A number or an array given as the token is there, but is no token: 401 like any unknown one.
    const licenseeId =
      typeof raw.token === 'string'
        ? state.tokenLicensee(raw.token, state.variations.tokenRejection?.revokeAfterUses)
        : null;
    if (!licenseeId) return rejectToken(state, res, entry);
    entry.licensee = licenseeId;
    countOrRefuse(state, licenseeId);
    const licensee = state.store.licensees.get(licenseeId)!;
    const params = readParams(raw, route!.params, licensee.timeZone);
    if (name.startsWith('post')) state.markDirty();
    const body = route!.handle({ store: state.store, licensee, params, clock: state.clock, baseUrl });
    return respond(
      state,
      res,
      entry,
      200,
      shapeBody(body, state.variations, route!.listName, route!.pageCount ?? false),
    );
  } catch (error) {
    if (error instanceof RateLimited) return tooMany(state, res, entry, error.retryAfter);
    if (!(error instanceof ServiceError)) throw error;
    return sendError(state, res, entry, state.variations.echoValues ? echoValue(error, raw) : error);
  }
}

/** The error with the value its field was given quoted in its message (a text value only; never the key or token). */
function echoValue(error: ServiceError, raw: Record<string, unknown>): ServiceError {
  const value =
    error.field === undefined || error.field === 'key' || error.field === 'token' ? undefined : raw[error.field];
  if (typeof value !== 'string') return error;
  return new ServiceError(error.status, error.code, `${error.message}: ${JSON.stringify(clip(value))}`, error.field);
}

/** The request target as a URL; null when it is none (`GET http://x:99999/…` names no valid port). */
function parseTarget(target: string): URL | null {
  try {
    return new URL(target, 'http://emulator');
  } catch {
    return null;
  }
}

/** The path of a target that is no valid URL, for the log: no scheme, host or query (a token may be there). */
function pathOf(target: string): string {
  return target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '').split(/[?#]/)[0] || '/';
}

const isAbsent = (value: unknown) => value === undefined || value === null || value === '';

/** A parameter's text when it is one text or number, as an integer parameter accepts either. */
function singleValue(value: unknown): string | undefined {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

class RateLimited extends Error {
  constructor(readonly retryAfter: number) {
    super('rate limited');
  }
}

function countOrRefuse(state: EmulatorState, licensee: string): void {
  const wait = state.admit(licensee);
  if (wait !== null) throw new RateLimited(wait);
}

function respond(state: EmulatorState, res: ServerResponse, entry: LogEntry, status: number, body: unknown): void {
  entry.status = status;
  state.record(entry);
  send(res, status, body);
}

function tooMany(state: EmulatorState, res: ServerResponse, entry: LogEntry, retryAfter: number): void {
  entry.status = 429;
  state.record(entry);
  const headers: Record<string, string> = state.variations.noRetryAfter ? {} : { 'retry-after': String(retryAfter) };
  send(
    res,
    429,
    { error: { code: 'RATE_LIMITED', message: 'more than the allowed requests in the last minute' } },
    headers,
  );
}

function sendError(state: EmulatorState, res: ServerResponse, entry: LogEntry, error: ServiceError): void {
  const v = state.variations;
  entry.status = error.status;
  if (v.nonJsonErrors) {
    state.record(entry);
    const html = v.nonJsonErrors === 'html' ? `<html><body><h1>${error.status} Error</h1></body></html>` : '';
    res.writeHead(error.status, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(html) });
    res.end(html);
    return;
  }
  const detail = { code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}) };
  if (v.errorWith200 && error.status !== 403) {
    entry.status = 200;
    state.record(entry);
    const body =
      v.errorWith200 === 'error'
        ? { error: detail }
        : v.errorWith200 === 'success-false'
          ? { success: false, message: error.message, code: error.code }
          : { status: 'error', message: error.message, code: error.code };
    send(res, 200, body);
    return;
  }
  state.record(entry);
  send(res, error.status, { error: detail });
}

function rejectToken(state: EmulatorState, res: ServerResponse, entry: LogEntry): void {
  const variation = state.variations.tokenRejection;
  if (!variation)
    return sendError(state, res, entry, new ServiceError(401, 'INVALID_TOKEN', 'token is invalid or expired', 'token'));
  entry.status = variation.status;
  state.record(entry);
  if (variation.form === 'empty') {
    res.writeHead(variation.status, { 'content-length': 0 });
    res.end();
    return;
  }
  const body =
    variation.form === 'code'
      ? { error: { code: 'TOKEN_EXPIRED', message: 'Request refused' } }
      : variation.form === 'field'
        ? { error: { code: 'INVALID_PARAMETER', message: 'Request refused', field: 'token' } }
        : { success: false, message: variation.message ?? 'Invalid or expired token' };
  send(res, variation.status, body);
}

function injectFault(
  state: EmulatorState,
  kind: string,
  errorStatus: number,
  req: IncomingMessage,
  res: ServerResponse,
  entry: LogEntry,
): void {
  switch (kind) {
    case 'reset':
      state.record(entry);
      req.socket.resetAndDestroy();
      return;
    case 'status':
      return sendError(
        state,
        res,
        entry,
        new ServiceError(errorStatus, errorStatus === 500 ? 'INTERNAL' : 'UNAVAILABLE', 'service unavailable'),
      );
    case 'malformed':
      entry.status = 200;
      state.record(entry);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"eventId": 50');
      return;
    default:
      return tooMany(state, res, entry, 2);
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const bytes = body instanceof RawJson ? body.bytes : Buffer.from(JSON.stringify(body));
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': bytes.length, ...headers });
  res.end(bytes);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    // Past the limit the rest is read and dropped, so the client gets its answer; a body far past
    // it is cut off.
    if (size > MAX_BODY * 64) req.destroy();
    else if (size <= MAX_BODY) chunks.push(chunk as Buffer);
  }
  if (size > MAX_BODY) throw new ServiceError(400, 'INVALID_PARAMETER', 'request body larger than 1 MiB');
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Form bodies, JSON bodies and query strings are all accepted (docs/upstream.md, "Transport").
 * Parameters are kept on an object without prototype, so that `__proto__` is a parameter like any
 * other. A JSON body's objects and arrays are handed on as their text (JsonText), as a form would
 * carry them: the parameter's reader parses them, keeping the order of their members.
 */
async function readRequestParams(req: IncomingMessage, url: URL): Promise<Record<string, unknown>> {
  const params: Record<string, unknown> = Object.create(null);
  for (const [key, value] of url.searchParams) params[key] = value;
  const text = await readBody(req);
  if (text.length === 0) return params;
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (!type.includes('application/json')) {
    for (const [key, value] of new URLSearchParams(text)) params[key] = value;
    return params;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ServiceError(400, 'INVALID_PARAMETER', 'request body is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ServiceError(400, 'INVALID_PARAMETER', 'request body must be a JSON object');
  }
  for (const [key, valueText] of objectMembers(text)) {
    params[key] =
      valueText.startsWith('{') || valueText.startsWith('[') ? new JsonText(valueText) : JSON.parse(valueText);
  }
  return params;
}

function withoutSecrets(params: Record<string, unknown>): Record<string, unknown> {
  const { key: _key, token: _token, ...rest } = params;
  return rest;
}

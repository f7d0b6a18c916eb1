import type { Pool } from 'undici';
import type { UpstreamCall } from './call.ts';
import { versionOf } from './endpoints.ts';
import { AttemptFailure } from './errors.ts';

export interface TransportOptions {
  /** The service, without /api/… */
  baseUrl: string;
  userAgent: string;
  /** Per-attempt timeout for connect, headers and body. */
  timeoutMs: number;
}

/** What the service answered, before anything is read into it (classify.ts does that). */
export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * The one place that talks HTTP to the service (the only importer of undici): one POST per call
 * to /api/<version>/<endpoint>, form- or JSON-encoded as the endpoint says. A failure to get an
 * answer is an AttemptFailure; every answer, whatever its status, is returned as received.
 */
export class Transport {
  /** Made with the first call: undici (its fetch, WebSocket, caches, all loaded whole) is 3.7 MiB of heap an idle gateway need not hold. */
  private pool?: Promise<Pool>;
  private readonly basePath: string;

  constructor(private readonly options: TransportOptions) {
    this.basePath = new URL(options.baseUrl).pathname.replace(/\/$/, '');
  }

  private poolNow(): Promise<Pool> {
    this.pool ??= import('undici').then(
      ({ Pool }) =>
        new Pool(new URL(this.options.baseUrl).origin, {
          connections: 64,
          keepAliveTimeout: 10_000,
          connectTimeout: this.options.timeoutMs,
          headersTimeout: this.options.timeoutMs,
          bodyTimeout: this.options.timeoutMs,
        }),
    );
    return this.pool;
  }

  /** Sends one attempt of the call; resolves with the answer as received. */
  async send(call: UpstreamCall): Promise<RawAnswer> {
    const params = call.token === undefined ? call.params : { token: call.token, ...call.params };
    const json = call.endpoint.body === 'json';
    const pool = await this.poolNow();
    try {
      const res = await pool.request({
        path: `${this.basePath}/api/${versionOf(call.name)}/${call.name}`,
        method: 'POST',
        headers: {
          'user-agent': this.options.userAgent,
          'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: json ? JSON.stringify(params) : encodeForm(params),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const text = await res.body.text();
      this.learnClock(res.headers.date);
      return { status: res.statusCode, headers: res.headers, text };
    } catch (error) {
      const e = error as { code?: string; name?: string };
      const timeout = e.name === 'TimeoutError' || /TIMEOUT/.test(e.code ?? '');
      // A refused connection never reached the service: even a create may be sent again.
      const refused = e.code === 'ECONNREFUSED';
      throw new AttemptFailure(timeout ? 'timeout' : 'network', timeout ? 'timed out' : (e.code ?? 'network error'), {
        maybeProcessed: !refused,
      });
    }
  }

  /** The service's "now" (its answers' Date headers, to the second): our clock until one was read. */
  serviceNow(): number {
    return Date.now() + this.clockOffsetMs;
  }

  private clockOffsetMs = 0;

  private learnClock(date: string | string[] | undefined): void {
    const dated = typeof date === 'string' ? Date.parse(date) : Number.NaN;
    if (!Number.isNaN(dated)) this.clockOffsetMs = dated - Date.now();
  }

  async close(): Promise<void> {
    await (await this.pool)?.close();
  }
}

/** Form encoding (docs/upstream.md, "Transport"): booleans as true/false, numbers in decimal, objects as JSON. */
function encodeForm(params: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null) continue;
    form.set(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
  return form.toString();
}

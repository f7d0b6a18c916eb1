import type { Agent, buildConnector } from 'undici';
import { AddressPolicy, AddressRefusedError } from './address-policy.ts';

/**
 * The one outbound path of the gateway towards addresses it is given rather than configured with
 * (router callbacks, webhooks): the address checked before anything is sent (against an allow-list
 * for router callbacks; by an `AddressPolicy`, again at each connection, for webhooks),
 * short timeouts, no redirect followed (a 3xx is an answer like any other, so an allowed address
 * cannot send us on to one that is not), and at most a few KiB of any answer read. Only the status
 * matters to the protocols served here. The upstream service is reached by `upstream/transport.ts`.
 */

export interface OutboundOptions {
  /** Connect, headers and body each within this, in ms. @default 5000 */
  timeoutMs?: number;
  /** Bytes of an answer read at most; the rest is dropped with the connection. @default 4096 */
  maxResponseBytes?: number;
  /** The whole exchange (connect, send, headers, body read) within this, in ms; unset: only the per-phase timeoutMs. */
  deadlineMs?: number;
}

/** An answer: its status, the headers a sender acts on, at most maxResponseBytes of its body, and how long it took. */
export interface OutboundAnswer {
  status: number;
  /** The `retry-after` header as sent, if any. */
  retryAfter?: string;
  /** The body's first maxResponseBytes, as text. */
  body: string;
  latencyMs: number;
}

/** A failure to get an answer: refused, reset, timed out, or an address the allow-list refuses. */
export class OutboundError extends Error {
  override name = 'OutboundError';
}

/**
 * Whether `address` lies under one of `prefixes` (URLs like `https://router.internal/callback`):
 * same scheme, host and port, and a path equal to the prefix's or below it. A prefix is matched by
 * its parts, not as text, so `https://router.internal` does not let `https://router.internal.evil.com` by.
 */
export function allowedBy(prefixes: readonly string[], address: string): boolean {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return false;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) return false;
  return prefixes.some((prefix) => {
    const allowed = new URL(prefix);
    if (allowed.origin !== url.origin) return false;
    const base = allowed.pathname;
    return base.endsWith('/')
      ? url.pathname.startsWith(base)
      : url.pathname === base || url.pathname.startsWith(`${base}/`);
  });
}

export class OutboundClient {
  /** Made with the first request: undici is loaded on first use (transport.ts says why). */
  private agent?: Promise<Agent>;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly deadlineMs: number | undefined;

  constructor(
    /**
     * The address prefixes requests may go to (anything else is refused before it is sent), or an
     * address policy checked before sending and again at each connection.
     */
    private readonly allowed: readonly string[] | AddressPolicy,
    options: OutboundOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.maxResponseBytes = options.maxResponseBytes ?? 4_096;
    this.deadlineMs = options.deadlineMs;
  }

  private agentNow(): Promise<Agent> {
    const { allowed, timeoutMs } = this;
    // undici's Agent follows no redirect unless a redirect interceptor is composed: none is.
    this.agent ??= import('undici').then(
      ({ Agent, buildConnector }) =>
        new Agent({
          connect:
            allowed instanceof AddressPolicy
              ? checkedConnector(buildConnector, allowed, timeoutMs)
              : { timeout: timeoutMs },
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          keepAliveTimeout: 4_000,
        }),
    );
    return this.agent;
  }

  /** Whether `address` may be called. */
  allows(address: string): boolean {
    const { allowed } = this;
    return allowed instanceof AddressPolicy ? allowed.refusal(address) === undefined : allowedBy(allowed, address);
  }

  /** POSTs `body` as JSON to `address`; the answer's status (a 3xx is not followed). */
  async postJson(address: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number }> {
    const { status } = await this.post(address, JSON.stringify(body), headers);
    return { status };
  }

  /**
   * POSTs `body` (JSON text, sent byte for byte: a signature covers it) to `address`. Rejects with
   * an OutboundError when there is no answer, an AddressRefusedError when the address is refused
   * (before sending, or at the connection); a 3xx is an answer, not followed.
   */
  async post(address: string, body: string, headers: Record<string, string> = {}): Promise<OutboundAnswer> {
    if (!this.allows(address)) {
      const { allowed } = this;
      throw allowed instanceof AddressPolicy
        ? new AddressRefusedError(allowed.refusal(address) ?? 'the address is refused')
        : new OutboundError('the address is not on the allow-list');
    }
    const started = performance.now();
    const agent = await this.agentNow();
    try {
      const answer = await agent.request({
        origin: new URL(address).origin,
        path: pathOf(address),
        method: 'POST',
        // Exactly application/json: some receivers (Hive Gateway's webhooks) compare the header as a whole.
        headers: { ...headers, 'content-type': 'application/json' },
        body,
        ...(this.deadlineMs === undefined ? {} : { signal: AbortSignal.timeout(this.deadlineMs) }),
      });
      const text = await this.drain(answer.body);
      const retryAfter = answer.headers['retry-after'];
      return {
        status: answer.statusCode,
        ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
        body: text,
        latencyMs: Math.round(performance.now() - started),
      };
    } catch (error) {
      const refused = refusalIn(error);
      if (refused) throw refused;
      throw new OutboundError(`no answer: ${(error as Error).message}`);
    }
  }

  /** Reads at most maxResponseBytes of an answer (returned as text), then drops the rest (and its connection). */
  private async drain(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
    const chunks: Buffer[] = [];
    let read = 0;
    for await (const chunk of body) {
      chunks.push(
        read + chunk.length > this.maxResponseBytes ? chunk.subarray(0, this.maxResponseBytes - read) : chunk,
      );
      read += chunk.length;
      if (read > this.maxResponseBytes) {
        body.destroy();
        break;
      }
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  async close(): Promise<void> {
    await (await this.agent)?.close();
  }
}

/** An address's path and query, as a dispatcher's `request` takes them. */
function pathOf(address: string): string {
  const url = new URL(address);
  return `${url.pathname}${url.search}`;
}

/**
 * A connector that applies `policy` again at each connection: an address refused there fails the
 * request before any byte is sent, and a name connects only to the addresses the policy checked.
 */
function checkedConnector(
  buildConnector: typeof import('undici').buildConnector,
  policy: AddressPolicy,
  timeoutMs: number,
): buildConnector.connector {
  // undici passes its other options through to net.connect / tls.connect, which take a `lookup`.
  const checked = buildConnector({ timeout: timeoutMs, lookup: policy.lookup } as buildConnector.BuildOptions);
  const exempt = buildConnector({ timeout: timeoutMs });
  return (options, callback) => {
    const verdict = policy.atConnection(options.hostname, options.protocol);
    if (verdict === 'exempt') return exempt(options, callback);
    if (verdict !== 'checked') return callback(new AddressRefusedError(verdict.refused), null);
    return checked(options, callback);
  };
}

/** The AddressRefusedError behind a failed request, if that is why it failed (undici may wrap it). */
function refusalIn(error: unknown): AddressRefusedError | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof AddressRefusedError) return cause;
  }
  return undefined;
}

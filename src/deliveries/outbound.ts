import { Agent, request } from 'undici';

/**
 * The one outbound path of the gateway towards addresses it is given rather than configured with
 * (router callbacks today): the address checked against an allow-list before anything is sent,
 * short timeouts, no redirect followed (a 3xx is an answer like any other, so an allowed address
 * cannot send us on to one that is not), and at most a few KiB of any answer read. Only the status
 * matters to the protocols served here. The upstream service is reached by `upstream/transport.ts`.
 */

export interface OutboundOptions {
  /** Connect, headers and body each within this, in ms. @default 5000 */
  timeoutMs?: number;
  /** Bytes of an answer read at most; the rest is dropped with the connection. @default 4096 */
  maxResponseBytes?: number;
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
  private readonly agent: Agent;
  private readonly maxResponseBytes: number;

  constructor(
    /** The address prefixes requests may go to; anything else is refused before it is sent. */
    private readonly prefixes: readonly string[],
    options: OutboundOptions = {},
  ) {
    const timeoutMs = options.timeoutMs ?? 5_000;
    this.maxResponseBytes = options.maxResponseBytes ?? 4_096;
    // undici's Agent follows no redirect unless a redirect interceptor is composed: none is.
    this.agent = new Agent({
      connect: { timeout: timeoutMs },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      keepAliveTimeout: 4_000,
    });
  }

  /** Whether `address` may be called. */
  allows(address: string): boolean {
    return allowedBy(this.prefixes, address);
  }

  /** POSTs `body` as JSON to `address`; the answer's status (a 3xx is not followed). */
  async postJson(address: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number }> {
    if (!this.allows(address)) throw new OutboundError('the address is not on the allow-list');
    try {
      const answer = await request(address, {
        method: 'POST',
        dispatcher: this.agent,
        // Exactly application/json: some receivers (Hive Gateway's webhooks) compare the header as a whole.
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await this.drain(answer.body);
      return { status: answer.statusCode };
    } catch (error) {
      throw new OutboundError(`no answer: ${(error as Error).message}`);
    }
  }

  /** Reads at most maxResponseBytes of an answer, then drops the rest (and its connection). */
  private async drain(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<void> {
    let read = 0;
    for await (const chunk of body) {
      read += chunk.length;
      if (read > this.maxResponseBytes) {
        body.destroy();
        return;
      }
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

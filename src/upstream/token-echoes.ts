import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { stableKey } from './cache.ts';
import type { UpstreamCall } from './call.ts';

/**
 * A refusal in words alone ("Token is expired" in a message, no code, no field) is believed at
 * once, whatever the token's age: the token layer drops the refused token and repeats the call with
 * one obtained after the refusal. When that repeat is refused in the same words, the words were the
 * data's (a client's value quoted back by the service): an echo. This remembers what echoes cost,
 * so that they stay bounded while a real revocation is always recovered:
 *
 * - the request (licensee, endpoint and a hash of its parameters) is remembered for
 *   ECHO_MEMORY_MS: its repeats renew nothing;
 * - after ECHO_CAP proven echoes within ECHO_WINDOW_MS for a licensee, words alone stop renewing
 *   that licensee's token until the window has passed (a code, a field or a bare 401 still renews).
 *
 * So a client echoing one value costs one authenticate, a flood of distinct echoing values at most
 * ECHO_CAP a minute per licensee (plus those already in flight together), and nothing here depends
 * on how old our clock thinks a token is. Kept per replica: replicas share the token itself, and
 * each bounds what its own clients' echoes cost.
 */

/** How long a request proven to echo words renews no token. */
export const ECHO_MEMORY_MS = 10 * 60_000;
/** Proven echoes per licensee within ECHO_WINDOW_MS after which words alone renew nothing. */
export const ECHO_CAP = 4;
export const ECHO_WINDOW_MS = 60_000;
/** Requests remembered at most (the least recently seen go first). */
const REMEMBERED_MAX = 10_000;

export interface TokenEchoesOptions {
  now: () => number;
  /** Told of each proven echo (the metric `gateway_upstream_token_echoes_total`). */
  onEcho?: (event: { licensee: string; endpoint: string }) => void;
}

export class TokenEchoes {
  private readonly remembered: LRUCache<string, true>;
  /** Each licensee's proven echoes within the last ECHO_WINDOW_MS, oldest first. */
  private readonly recent = new Map<string, number[]>();

  constructor(private readonly options: TokenEchoesOptions) {
    this.remembered = new LRUCache({
      max: REMEMBERED_MAX,
      ttl: ECHO_MEMORY_MS,
      // Read the clock on every check: the default caches it for a tick, which a fake clock does not move.
      ttlResolution: 0,
      perf: { now: options.now },
    });
  }

  /** Whether words alone refusing this call may renew the licensee's token. */
  mayRenew(call: UpstreamCall): boolean {
    if (this.remembered.has(requestKey(call))) return false;
    return this.within(call.licensee.systemIdentifier).length < ECHO_CAP;
  }

  /** The repeat of `call` with a token obtained after the refusal was refused in the same words. */
  proven(call: UpstreamCall): void {
    const licensee = call.licensee.systemIdentifier;
    this.remembered.set(requestKey(call), true);
    const recent = this.within(licensee);
    recent.push(this.options.now());
    this.recent.set(licensee, recent);
    this.options.onEcho?.({ licensee, endpoint: call.name });
  }

  /** Forgets every echo (a test's fresh start). */
  clear(): void {
    this.remembered.clear();
    this.recent.clear();
  }

  /** The licensee's echoes still inside the window (older ones dropped). */
  private within(licensee: string): number[] {
    const recent = this.recent.get(licensee);
    if (!recent) return [];
    const since = this.options.now() - ECHO_WINDOW_MS;
    while (recent.length > 0 && recent[0]! <= since) recent.shift();
    if (recent.length === 0) this.recent.delete(licensee);
    return recent;
  }
}

/** The request as the service saw it: licensee, endpoint, and a hash of its parameters (never the token). */
function requestKey(call: UpstreamCall): string {
  const params = createHash('sha256').update(stableKey(call.params)).digest('base64url');
  return `${call.licensee.systemIdentifier}|${call.name}|${params}`;
}

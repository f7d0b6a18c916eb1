import type { UpstreamAccount } from './account.ts';
import type { Layer } from './call.ts';
import { withDeadline } from './deadline.ts';
import type { Breaker } from './resilience.ts';
import type { TokenManager } from './tokens.ts';

export interface ReadinessOptions {
  tokens: TokenManager;
  breaker: Breaker;
  /** How long `ready` may take (docs/architecture.md, "Readiness": within a second). */
  answerWithinMs?: number;
  /** At most one authenticate this often on readiness' behalf, so health checks spend no budget. */
  authenticateEveryMs?: number;
  now?: () => number;
}

/**
 * Whether the gateway can serve, answered from state: not while the breaker is open; yes while a
 * valid token is held or the last upstream call succeeded. Only when neither says so does it ask
 * for a token, at most once per `authenticateEveryMs`, and it answers within `answerWithinMs`
 * whether or not that authenticate has finished.
 */
export class Readiness {
  /** Per licensee: whether its last attempt that reached the transport (authenticate included) was answered. */
  private readonly lastCallSucceeded = new Map<string, boolean>();
  private readonly askedAt = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly options: ReadinessOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Records the outcome of every attempt that reached the transport. */
  readonly layer: Layer = (next) => async (call) => {
    try {
      const result = await next(call);
      this.lastCallSucceeded.set(call.licensee.systemIdentifier, true);
      return result;
    } catch (error) {
      this.lastCallSucceeded.set(call.licensee.systemIdentifier, false);
      throw error;
    }
  };

  async ready(licensee: UpstreamAccount): Promise<boolean> {
    if (this.options.breaker.isOpen()) return false;
    if (this.lastCallSucceeded.get(licensee.systemIdentifier) === true || (await this.options.tokens.holds(licensee)))
      return true;
    const askedAt = this.askedAt.get(licensee.systemIdentifier);
    if (askedAt !== undefined && this.now() - askedAt < (this.options.authenticateEveryMs ?? 30_000)) return false;
    this.askedAt.set(licensee.systemIdentifier, this.now());
    // One attempt, no retries: the probe must cost one authenticate even during an outage.
    const obtained = this.options.tokens.get(licensee, Infinity, 'once').then(
      () => true,
      () => false,
    );
    const answerBy = this.now() + (this.options.answerWithinMs ?? 1_000);
    return withDeadline(obtained, answerBy, () => new Error('not yet'), this.now).catch(() => false);
  }
}

import type { ExecutionResult } from 'graphql';
import { createGraphQLError, isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Principal } from '../auth/principal.ts';
import { ErrorCode } from '../error-codes.ts';
import { whenEnded } from './streams.ts';

/**
 * SUBSCRIPTIONS_PER_CLIENT: live subscriptions one principal (a client of a licensee) may hold at
 * once, over SSE and graphql-ws alike. Each holds a change feed's attention and, on its first
 * subscriber, a baseline read of the whole event: a client opening them by the hundred would
 * spend its licensee's budget. Beyond the cap a subscription is refused with RATE_LIMITED.
 */

/** Counts live subscriptions per principal; `acquire` answers the release, or null when full. */
export interface SubscriptionSlots {
  acquire(principal: string): Promise<(() => void) | null>;
}

/** One process's slots (without REDIS_URL, one process is the whole gateway). */
export class MemorySubscriptionSlots implements SubscriptionSlots {
  private readonly live = new Map<string, number>();

  constructor(private readonly limit: number) {}

  async acquire(principal: string): Promise<(() => void) | null> {
    const held = this.live.get(principal) ?? 0;
    if (held >= this.limit) return null;
    this.live.set(principal, held + 1);
    return () => {
      const left = (this.live.get(principal) ?? 1) - 1;
      if (left > 0) this.live.set(principal, left);
      else this.live.delete(principal);
    };
  }
}

/** The key a principal's subscriptions are counted under: its licensee and client. */
export const principalKey = (principal: Principal) => `${principal.licenseeId}\u0000${principal.client}`;

export function useSubscriptionLimit(
  slots: SubscriptionSlots,
  limit: number,
  principalOf: (context: unknown) => Principal | undefined,
): Plugin {
  return {
    async onSubscribe({ args, setResultAndStopExecution }) {
      const principal = principalOf(args.contextValue);
      if (!principal) return;
      const release = await slots.acquire(principalKey(principal));
      if (!release) {
        const message = `This client already has ${limit} live subscriptions (SUBSCRIPTIONS_PER_CLIENT): end one before opening another.`;
        return setResultAndStopExecution({
          errors: [
            createGraphQLError(message, {
              extensions: { code: ErrorCode.RATE_LIMITED, limit: 'SUBSCRIPTIONS_PER_CLIENT' },
            }),
          ],
        });
      }
      return {
        onSubscribeResult({ result, setResult }) {
          if (isAsyncIterable(result)) setResult(whenEnded(result as AsyncIterable<ExecutionResult>, release) as never);
          else release();
        },
        onSubscribeError: release,
      };
    },
  };
}

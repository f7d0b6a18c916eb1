import type { BudgetPriority, RateBudget } from '../budget.ts';
import type { Layer, UpstreamCall } from '../call.ts';
import { isWrite } from '../endpoints.ts';
import { AttemptFailure } from '../errors.ts';

type Logger = { warn(obj: object, msg: string): void };

/**
 * Each attempt waits for a slot of the licensee's rate budget (its own rateLimit, until its
 * deadline at most) and gives it back when answered. It sits inside retry: every attempt is a
 * request the service counts.
 * A 429 still answered throttles the licensee (upstream/budget.ts); any other answer ends a throttle.
 * A write goes ahead of every read (priorityOf).
 */
export function budgetLayer(budget: RateBudget, logger?: Logger): Layer {
  return (next) => async (call) => {
    const licensee = call.licensee.systemIdentifier;
    const slot = call.onlyIfFree
      ? await budget.acquireIfFree(licensee, call.licensee.rateLimit)
      : await budget.acquire(licensee, call.deadline, call.licensee.rateLimit, priorityOf(call));
    try {
      const result = await next(call);
      budget.recovered(licensee);
      return result;
    } catch (error) {
      if (error instanceof AttemptFailure && error.kind === 'throttled') {
        const waitMs = budget.throttle(licensee, slot, error.retryAfterMs);
        logger?.warn(
          { endpoint: call.name, licensee, waitMs, retryAfter: error.retryAfterMs !== undefined },
          'upstream answered 429; holding this licensee back',
        );
      } else if (!(error instanceof AttemptFailure)) {
        // The service answered (a refusal is an answer): it is taking requests again.
        budget.recovered(licensee);
      }
      throw error;
    } finally {
      void budget.finish(licensee, slot);
    }
  };
}

/**
 * A write's place is ahead of every read, with the share of the window reads never take
 * (WRITE_SHARE), whatever its caller asked. So is authenticate's: every call waits for the token,
 * a write too, and one refused behind the reads would refuse the writes waiting for it.
 */
function priorityOf(call: UpstreamCall): BudgetPriority | undefined {
  return isWrite(call.endpoint) || call.name === 'authenticate' ? 'write' : call.priority;
}

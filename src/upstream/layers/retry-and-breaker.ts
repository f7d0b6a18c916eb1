import type { Layer } from '../call.ts';
import { AttemptFailure, UpstreamUnavailableError } from '../errors.ts';
import { type Breaker, createRetry } from '../resilience.ts';

export interface RetryOptions {
  /** Retries after the first attempt of an idempotent call. */
  maxRetries: number;
  /** The data calls' breaker; authenticate passes none (its own policy, outside the breaker). */
  breaker?: Breaker;
  /** The clock deadlines are read on (the client's). */
  now?: () => number;
}

/**
 * Retries what is safe to retry (every AttemptFailure of an idempotent call; of a create, only
 * those the service cannot have acted on), each attempt through the breaker. No attempt starts
 * after the call's deadline, and no backoff, nor any wait for a half-open breaker's probe, outlasts it.
 */
export function retryLayer({ maxRetries, breaker, now = Date.now }: RetryOptions): Layer {
  return (next) => async (call) => {
    const shouldRetry = (e: Error) =>
      e instanceof AttemptFailure && (call.endpoint.idempotent || !e.maybeProcessed) && now() < call.deadline;
    const policy = createRetry(maxRetries, shouldRetry, call.deadline, now);
    let last: unknown;
    return policy.execute(({ attempt }) => {
      // A backoff that ran past the deadline ends with the failure that caused it, not RATE_LIMITED.
      if (attempt > 0 && now() >= call.deadline) throw last;
      const once = breaker
        ? throughBreaker(
            breaker,
            () => next(call),
            call.deadline - now(),
            () => lateError(last),
          )
        : next(call);
      return once.catch((error: unknown) => {
        last = error;
        throw error;
      });
    });
  };
}

/**
 * Runs `attempt` through the breaker. While the breaker is half-open, cockatiel makes every other
 * call wait for the probe's outcome: that wait ends at the deadline, but an attempt already
 * started is never cut off by it (its own timeouts bound it).
 */
function throughBreaker(
  breaker: Breaker,
  attempt: () => Promise<unknown>,
  waitAtMostMs: number,
  onLate: () => Error,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let started = false;
    let gaveUp = false;
    let timer: NodeJS.Timeout | undefined;
    const run = breaker.policy.execute(() => {
      // Nobody waits for it any more: send nothing. (Only a call that waited gets here late, and
      // it runs with the circuit closed, never as the half-open probe.)
      if (gaveUp) return Promise.resolve(undefined);
      started = true;
      clearTimeout(timer);
      return attempt();
    });
    timer = setTimeout(
      () => {
        if (started) return;
        gaveUp = true;
        reject(onLate());
      },
      Math.max(0, waitAtMostMs),
    );
    run.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** At the deadline, the failure that kept the call from succeeding, if any. */
function lateError(last: unknown): Error {
  if (last instanceof Error) return last;
  return new UpstreamUnavailableError('the reservation service did not answer before the call’s deadline');
}

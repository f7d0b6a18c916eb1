import {
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  ExponentialBackoff,
  handleWhen,
  type IBackoffFactory,
  type IPolicy,
  type RetryPolicy,
  retry,
  SamplingBreaker,
  wrap,
} from 'cockatiel';
import { AttemptFailure } from './errors.ts';

/** Failures that mean the service is down, as far as the breaker counts. */
const isOutage = (e: Error) =>
  e instanceof AttemptFailure && (e.kind === 'network' || e.kind === 'timeout' || e.kind === 'server');

/**
 * The breaker of one upstream origin: it opens only when the service is really down, after 20
 * consecutive failures or over 90 % failures among at least 30 calls in 10 s, and lets a probe
 * through after 5 s (docs/architecture.md, "Resilience"), so a flaky service is retried through.
 */
export function createBreaker(halfOpenAfterMs = 5_000): Breaker {
  const consecutive = circuitBreaker(handleWhen(isOutage), {
    halfOpenAfter: halfOpenAfterMs,
    breaker: new ConsecutiveBreaker(20),
  });
  const sampling = circuitBreaker(handleWhen(isOutage), {
    halfOpenAfter: halfOpenAfterMs,
    breaker: new SamplingBreaker({ threshold: 0.9, duration: 10_000, minimumRps: 3 }),
  });
  return {
    policy: wrap(consecutive, sampling),
    isOpen: () => consecutive.state === CircuitState.Open || sampling.state === CircuitState.Open,
  };
}

export interface Breaker {
  policy: IPolicy;
  /** Whether calls are being refused without being sent (readiness reads it). */
  isOpen(): boolean;
}

/**
 * Retries with capped exponential backoff and decorrelated jitter (cockatiel's default generator),
 * no wait outlasting `deadline`. `shouldRetry` decides per failure: an idempotent call retries
 * every AttemptFailure, a create only those the service cannot have acted on.
 */
export function createRetry(
  maxAttempts: number,
  shouldRetry: (error: Error) => boolean,
  deadline = Infinity,
  now: () => number = Date.now,
): RetryPolicy {
  return retry(handleWhen(shouldRetry), {
    maxAttempts,
    backoff: endingBy(deadline, now, new ExponentialBackoff({ initialDelay: 50, maxDelay: 2_000 })),
  });
}

/**
 * Each delay of `backoff`, cut to the time left before `deadline`. cockatiel's sleep between
 * attempts cannot be cancelled, and the deadline is checked before it: uncut, a call could end up
 * to one whole delay (2 s) after its deadline.
 */
function endingBy(deadline: number, now: () => number, backoff: IBackoffFactory<unknown>): IBackoffFactory<unknown> {
  return {
    next(context) {
      const step = backoff.next(context);
      return {
        duration: Math.max(0, Math.min(step.duration, deadline - now())),
        next: endingBy(deadline, now, step).next,
      };
    },
  };
}

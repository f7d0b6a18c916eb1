/**
 * What the upstream layer tells an observer (metrics, traces, the status page) about its calls:
 * names, numbers and codes only, never parameters, keys or tokens.
 */
export interface UpstreamObserver {
  /** One attempt sent to the service and how it ended: an HTTP status, or `network`/`timeout`. */
  attempt(event: AttemptEvent): void;
  /** A call of a cached endpoint answered with (`hit`: cache or a shared call in flight) or without sending anything. */
  cacheRead?(event: { licensee: string; endpoint: string; hit: boolean }): void;
  /** An authenticate ended without a token, after its own retries: a first token, a renewal or readiness' probe failed. */
  tokenFailure?(event: { licensee: string }): void;
  /** A refusal in words alone proved to be the data's: the repeat with a fresh token got the same words (token-echoes.ts). */
  tokenEcho?(event: { licensee: string; endpoint: string }): void;
}

export interface AttemptEvent {
  licensee: string;
  endpoint: string;
  version: string;
  status: number | 'network' | 'timeout';
  /** 1 for the first attempt of a call (with its token), 2 for its first retry, … */
  attempt: number;
  durationMs: number;
  /** When the attempt was sent (ms since the epoch, the client's clock). */
  startedAt: number;
}

/** Several observers as one (metrics and traces), each told of everything. */
export function observeAll(observers: readonly (UpstreamObserver | undefined)[]): UpstreamObserver {
  const present = observers.filter((observer): observer is UpstreamObserver => observer !== undefined);
  return {
    attempt: (event) => present.forEach((observer) => observer.attempt(event)),
    cacheRead: (event) => present.forEach((observer) => observer.cacheRead?.(event)),
    tokenFailure: (event) => present.forEach((observer) => observer.tokenFailure?.(event)),
    tokenEcho: (event) => present.forEach((observer) => observer.tokenEcho?.(event)),
  };
}

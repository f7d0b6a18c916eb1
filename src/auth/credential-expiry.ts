import type { ExecutionResult } from 'graphql';
import { createGraphQLError, isAsyncIterable, type Plugin } from 'graphql-yoga';
import { ErrorCode } from '../error-codes.ts';
import { endingWhen } from '../operations/streams.ts';
import { hasExpired, type Principal } from './principal.ts';

/**
 * A credential that expires ends what it opened. Over HTTP every request shows its credential
 * again, but an operation that lives on (a subscription over SSE, an operation on a socket opened
 * with a token that has since expired) would otherwise outlive it: a JWT past its `exp` is refused
 * for each new operation, and a stream ends at the expiry with an UNAUTHENTICATED error, so the
 * client reconnects with a fresh token. The WebSocket door closes its socket then too (4401).
 */

export const EXPIRED_MESSAGE = 'The token has expired: reconnect with a fresh token.';

export const expiredError = () =>
  createGraphQLError(EXPIRED_MESSAGE, { extensions: { code: ErrorCode.UNAUTHENTICATED } });

/** setTimeout's longest delay; a later moment is waited for in steps. */
const LONGEST_DELAY_MS = 2 ** 31 - 1;

/** Calls `action` once `at` (epoch ms) has come; the returned function cancels it. */
export function atTime(at: number, action: () => void, now: () => number = Date.now): () => void {
  let timer: NodeJS.Timeout;
  const arm = () => {
    const wait = at - now();
    if (wait <= 0) return action();
    timer = setTimeout(arm, Math.min(wait, LONGEST_DELAY_MS));
    timer.unref();
  };
  arm();
  return () => clearTimeout(timer);
}

/** `source` until `at`, then `last` and the end (the source is told to stop). */
export function endingAt<T>(source: AsyncIterable<T>, at: number, last: () => T): AsyncIterableIterator<T> {
  let cancel = () => {};
  const expired = new Promise<void>((resolve) => {
    cancel = atTime(at, resolve);
  });
  return endingWhen(source, expired, last, () => cancel());
}

/** What tells that a credential is no longer accepted before its expiry: a reload removed it (auth/authenticator.ts). */
export interface Revocations {
  watch(principal: Principal, end: () => void): () => void;
}

export const REVOKED_MESSAGE =
  'The credential is no longer accepted by this gateway (its configuration was changed): reconnect with a valid one.';

const revokedError = () => createGraphQLError(REVOKED_MESSAGE, { extensions: { code: ErrorCode.UNAUTHENTICATED } });

/**
 * Refuses operations of an expired credential and ends its streams at the expiry, or as soon as
 * the credential is revoked (a reload of LICENSEES_FILE removed it); every door runs it.
 */
export function useCredentialExpiry(
  principalOf: (context: unknown) => Principal | undefined,
  revocations?: Revocations,
): Plugin {
  const refuseExpired = (context: unknown, stop: (result: ExecutionResult) => void) => {
    const principal = principalOf(context);
    if (principal && hasExpired(principal)) stop({ errors: [expiredError()] });
  };
  const endStreams = (context: unknown) => {
    const principal = principalOf(context);
    if (!principal || (principal.expiresAt === undefined && !revocations)) return undefined;
    return {
      onResult: ({ result, setResult }: { result: unknown; setResult: (result: never) => void }) => {
        if (!isAsyncIterable(result)) return;
        let stream = result as AsyncIterable<ExecutionResult>;
        if (principal.expiresAt !== undefined)
          stream = endingAt(stream, principal.expiresAt, () => ({ errors: [expiredError()] }));
        if (revocations) {
          let stopWatching = () => {};
          const revoked = new Promise<void>((resolve) => {
            stopWatching = revocations.watch(principal, resolve);
          });
          stream = endingWhen(
            stream,
            revoked,
            () => ({ errors: [revokedError()] }),
            () => stopWatching(),
          );
        }
        setResult(stream as never);
      },
    };
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      refuseExpired(args.contextValue, setResultAndStopExecution);
      const ends = endStreams(args.contextValue);
      return ends && { onExecuteDone: ends.onResult };
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      refuseExpired(args.contextValue, setResultAndStopExecution);
      const ends = endStreams(args.contextValue);
      return ends && { onSubscribeResult: ends.onResult };
    },
  };
}

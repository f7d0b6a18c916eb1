import type { ExecutionResult } from 'graphql';
import { createGraphQLError, isAsyncIterable, type Plugin } from 'graphql-yoga';
import { ErrorCode } from '../error-codes.ts';
import { asksForCallbacks, readTarget } from './callback-protocol.ts';
import type { CallbackRecord } from './callback-store.ts';
import { type CallbackDeliveries, keyOf } from './callbacks.ts';
import { ChangeCursor } from './resume.ts';

/**
 * Subscriptions through router callbacks (docs/clients.md, "Live reservation changes"): a subscription POSTed
 * by a router with `Accept: application/json;callbackSpec=1.0` runs through the same envelope as
 * over SSE and graphql-ws (credential, scopes, limits, cost, subscription cap, audit), and its
 * stream is handed to the deliveries instead of the response, which is `{"data": null}`.
 *
 * Placed after every document check: its `onSubscribe` sends the `check` to the router only for a
 * subscription every rule let through, and before the subscription starts its feed.
 */

/** The request headers that carry the client's credential: kept to open the subscription again on another replica. */
const CREDENTIAL_HEADERS = ['authorization', 'x-api-key'];

/** What the server context carries when the gateway opens a recorded subscription again (never a client). */
export interface CallbackAdoption {
  callbackAdoption?: CallbackRecord;
}

const refusal = (message: string) =>
  createGraphQLError(message, { extensions: { code: ErrorCode.BAD_USER_INPUT, http: { status: 400 } } });

export function useSubscriptionCallbacks(deliveries: CallbackDeliveries, options: { enabled: boolean }): Plugin {
  const opening = new WeakMap<Request, CallbackRecord>();
  const cursors = new WeakMap<Request, ChangeCursor>();
  return {
    onParams({ params, request, setResult, context }) {
      const adoption = (context as CallbackAdoption).callbackAdoption;
      if (!adoption && !asksForCallbacks(request)) return;
      const extension = (params.extensions as { subscription?: unknown } | undefined)?.subscription;
      if (extension === undefined) return;
      const read = readTarget(extension);
      if ('problem' in read) return setResult({ errors: [refusal(read.problem)] });
      if (!options.enabled)
        return setResult({
          errors: [
            refusal(
              'Subscriptions through router callbacks are off: SUBSCRIPTION_CALLBACK_URLS names no callback URL.',
            ),
          ],
        });
      // Before a single request goes out to it: a client cannot make the gateway call an address of its choosing.
      if (!deliveries.allows(read.target.callbackUrl))
        return setResult({
          errors: [
            refusal(
              'extensions.subscription.callbackUrl: not under any of the callback URL prefixes of SUBSCRIPTION_CALLBACK_URLS.',
            ),
          ],
        });
      const headers: Record<string, string> = {};
      for (const name of CREDENTIAL_HEADERS) {
        const value = request.headers.get(name);
        if (value !== null) headers[name] = value;
      }
      opening.set(
        request,
        adoption ?? {
          key: keyOf(read.target),
          target: read.target,
          request: { url: request.url, headers, params: { ...params } },
        },
      );
    },
    async onSubscribe({ args, setResultAndStopExecution }) {
      const request = (args.contextValue as { request?: Request }).request;
      const record = request && opening.get(request);
      if (!record) return;
      const status = await deliveries.check(record.target);
      if (status === 204) {
        // The stream's resolvers tell it where they stand: its record keeps it for a resume elsewhere.
        const cursor = new ChangeCursor();
        cursors.set(request, cursor);
        (args.contextValue as { changeCursor?: ChangeCursor }).changeCursor = cursor;
        return;
      }
      opening.delete(request);
      const answered = status === 0 ? 'could not be reached' : `answered ${status}`;
      setResultAndStopExecution({
        errors: [
          refusal(`The callback URL ${answered} to the subscription's check (204 expected): nothing was started.`),
        ],
      });
    },
    onExecutionResult({ request, result, setResult }) {
      const record = opening.get(request);
      if (!record) return;
      opening.delete(request);
      // Refused by a rule (or a query sent with callbacks): the router gets the answer itself.
      if (!isAsyncIterable(result)) return;
      void deliveries.start(record, result as AsyncIterable<ExecutionResult>, cursors.get(request));
      setResult({ data: null });
    },
  };
}

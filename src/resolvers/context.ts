import type { Principal } from '../auth/principal.ts';
import type { FeedRegistry } from '../changes/registry.ts';
import type { UpstreamAccount } from '../upstream/account.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { createRequestCalls, type RequestCalls } from './request-calls.ts';

/**
 * The per-request context: who asked (the principal), the licensee it acts for, and the request's
 * own upstream calls. Nothing below the server reads credentials from anywhere else, so every resolver,
 * loader and upstream call acts for the principal's licensee only.
 */
export interface GatewayContext {
  principal: Principal;
  /** The account at the service the principal's licensee acts as. */
  account: UpstreamAccount;
  upstream: UpstreamClient;
  calls: RequestCalls;
  /** Where resolvers report what they skip (records that do not decode); a pino logger fits. */
  log?: ResolverLog;
  /** The change feeds `reservationChanged` subscribes to (one poller per licensee and event). */
  changeFeeds?: FeedRegistry;
  /**
   * Told where a `reservationChanged` stream stands: its start (`since`, else now on the service's
   * clock), then the `modifiedAt` of each change it resolves. Set for callback subscriptions only,
   * whose record keeps the position so that another replica can resume the stream from it.
   */
  changeCursor?: { at(instant: string): void };
}

export interface ResolverLog {
  warn(details: object, message: string): void;
}

/** `onSent` counts the operation's upstream requests (see createRequestCalls). */
export function createContext(
  principal: Principal,
  account: UpstreamAccount,
  upstream: UpstreamClient,
  log?: ResolverLog,
  onSent?: () => void,
): GatewayContext {
  return {
    principal,
    account,
    upstream,
    calls: createRequestCalls(account, upstream, onSent),
    ...(log ? { log } : {}),
  };
}

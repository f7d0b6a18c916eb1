import type { Principal } from '../auth/principal.ts';
import type { FeedRegistry } from '../changes/registry.ts';
import type { UpstreamAccount } from '../upstream/account.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { WebhookManagement } from '../webhooks/management.ts';
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
  /** The client asked that every read reach the service (see `freshReadAsked`): no kept answer serves it. */
  freshReads?: boolean;
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
  /** Webhook management (src/resolvers/webhook.ts), set by the gateway. */
  webhooks?: WebhookManagement;
}

export interface ResolverLog {
  warn(details: object, message: string): void;
}

/** `onSent` counts the operation's upstream requests (see createRequestCalls); `fresh`: see GatewayContext.freshReads. */
export function createContext(
  principal: Principal,
  account: UpstreamAccount,
  upstream: UpstreamClient,
  log?: ResolverLog,
  onSent?: () => void,
  fresh = false,
): GatewayContext {
  return {
    principal,
    account,
    upstream,
    calls: createRequestCalls(account, upstream, onSent, fresh),
    ...(fresh ? { freshReads: true } : {}),
    ...(log ? { log } : {}),
  };
}

/**
 * Whether a client asked that its operation's reads reach the service rather than any kept answer
 * (docs/clients.md, "How fresh an answer is"): `"extensions": {"freshRead": true}` beside the query,
 * on every door, or, over HTTP, the request's `Cache-Control: no-cache`, as a cache in front of any
 * origin reads it.
 */
export function freshReadAsked(
  params: { extensions?: Record<string, unknown> } | undefined,
  request?: Request,
): boolean {
  return params?.extensions?.freshRead === true || /\bno-cache\b/i.test(request?.headers.get('cache-control') ?? '');
}

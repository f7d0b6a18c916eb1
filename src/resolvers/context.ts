import type { Principal } from '../auth/principal.ts';
import type { FeedRegistry } from '../changes/registry.ts';
import type { Licensee } from '../upstream/licensee.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { createLoaders, type Loaders } from './loaders.ts';

/**
 * The per-request context: who asked (the principal), the licensee it acts for, and the request's
 * own loaders. Nothing below the server reads credentials from anywhere else, so every resolver,
 * loader and upstream call acts for the principal's licensee only.
 */
export interface GatewayContext {
  principal: Principal;
  /** The principal's licensee as the upstream layer knows it (its id is the systemIdentifier). */
  licensee: Licensee;
  upstream: UpstreamClient;
  loaders: Loaders;
  /** Where resolvers report what they skip (records that do not decode); a pino logger fits. */
  log?: ResolverLog;
  /** The change feeds `reservationChanged` subscribes to (one poller per licensee and event). */
  changeFeeds?: FeedRegistry;
}

export interface ResolverLog {
  warn(details: object, message: string): void;
}

/** `onSent` counts the operation's upstream requests (see createLoaders). */
export function createContext(principal: Principal, licensee: Licensee, upstream: UpstreamClient, log?: ResolverLog, onSent?: () => void): GatewayContext {
  return { principal, licensee, upstream, loaders: createLoaders(licensee, upstream, onSent), ...(log ? { log } : {}) };
}

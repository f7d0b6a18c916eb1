import type { Licensee } from '../upstream/licensee.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { createLoaders, type Loaders } from './loaders.ts';

/**
 * The per-request context: the licensee this request acts for, and the request's own loaders.
 * Nothing below the server reads credentials from anywhere else, so several licensees and client
 * authentication can come without rework.
 */
export interface GatewayContext {
  licensee: Licensee;
  upstream: UpstreamClient;
  loaders: Loaders;
  /** Where resolvers report what they skip (records that do not decode); a pino logger fits. */
  log?: ResolverLog;
}

export interface ResolverLog {
  warn(details: object, message: string): void;
}

export function createContext(licensee: Licensee, upstream: UpstreamClient, log?: ResolverLog): GatewayContext {
  return { licensee, upstream, loaders: createLoaders(licensee, upstream), ...(log ? { log } : {}) };
}

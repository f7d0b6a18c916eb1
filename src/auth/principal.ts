import { SCOPES, type Scope } from '../config/licensees.ts';

/** Who a request acts for: the client, the licensee it was granted, and its rights. */
export interface Principal {
  /** The client's name (LICENSEES_FILE's `name`, or the JWT's client), for logs; never a secret. */
  client: string;
  /** The licensee's `id` in LICENSEES_FILE (its systemIdentifier without a file). */
  licenseeId: string;
  scopes: ReadonlySet<Scope>;
  /**
   * When the credential stops being accepted (epoch ms; a JWT's `exp` and the clock tolerance):
   * what it opened (a socket, a stream) ends then. Absent: it does not expire (an API key).
   */
  expiresAt?: number;
}

/** Whether the principal's credential has expired at `now`. */
export function hasExpired(principal: Principal, now: number = Date.now()): boolean {
  return principal.expiresAt !== undefined && now >= principal.expiresAt;
}

/** GATEWAY_AUTH=none: everyone is this client of the only licensee, with every right. */
export function anonymousPrincipal(licenseeId: string): Principal {
  return { client: 'anonymous', licenseeId, scopes: new Set(SCOPES) };
}

/**
 * What decides an answer for a principal: its licensee's data as its scopes let it see them. Two
 * principals with the same audience get the same answer to the same operation (the response cache
 * keeps one for both, a shared subscription runs once for both); two licensees never share one,
 * nor two clients of one licensee with different scopes. Kept per principal object (one per
 * credential and its scopes), so a hit does not sort and print the scopes again.
 */
export function audienceOf(principal: Principal): string {
  let audience = audiences.get(principal);
  if (audience === undefined)
    audiences.set(principal, (audience = JSON.stringify([principal.licenseeId, [...principal.scopes].sort()])));
  return audience;
}

const audiences = new WeakMap<Principal, string>();

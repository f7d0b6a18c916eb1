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

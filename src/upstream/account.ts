/**
 * An account at the reservation service, which the service calls a licensee: whose token,
 * budget, cache and time zone a call uses. The gateway's own licensees (config/licensees.ts) each
 * act as one.
 */
export interface UpstreamAccount {
  /** The licensee number, sent as systemIdentifier. */
  systemIdentifier: string;
  /** The key from the licensee's console. Read only by the token manager. */
  key: string;
  /** IANA zone of the licensee's wall-clock timestamps. */
  timeZone: string;
  /** Requests per rate window for this licensee; the client's UPSTREAM_RATE_LIMIT when absent. */
  rateLimit?: number;
}

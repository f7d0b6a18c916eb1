/** The licensee a call acts for: whose token, budget, cache and time zone it uses. */
export interface Licensee {
  /** The licensee number, sent as systemIdentifier. */
  id: string;
  /** The key from the licensee's console. Read only by the token manager. */
  key: string;
  /** IANA zone of the licensee's wall-clock timestamps. */
  timeZone: string;
  /** Requests per rate window for this licensee; the client's UPSTREAM_RATE_LIMIT when absent. */
  rateLimit?: number;
}

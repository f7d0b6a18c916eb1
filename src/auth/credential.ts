/** What a request presents as its credential, read from its headers and nothing else. */
export type Presented =
  | { kind: 'missing' }
  | { kind: 'malformed'; problem: string }
  | { kind: 'bearer'; value: string }
  | { kind: 'api-key-header'; value: string };

/**
 * `Authorization: Bearer <credential>` or `X-Api-Key: <credential>`. The scheme is matched without
 * regard to case (RFC 9110 section 11.1); any other scheme, a bare `Bearer`, or both headers at
 * once is malformed rather than missing, so the client learns what it got wrong.
 */
export function presentedCredential(headers: Headers): Presented {
  const authorization = headers.get('authorization')?.trim();
  const apiKey = headers.get('x-api-key')?.trim();
  if (authorization && apiKey)
    return { kind: 'malformed', problem: 'both Authorization and X-Api-Key were sent; send one of them' };
  if (apiKey) return { kind: 'api-key-header', value: apiKey };
  if (!authorization) return { kind: 'missing' };
  const [scheme, value, ...rest] = authorization.split(/\s+/);
  if (scheme?.toLowerCase() !== 'bearer')
    return { kind: 'malformed', problem: `${schemeName(scheme)} is not accepted; use Bearer` };
  if (!value || rest.length > 0)
    return { kind: 'malformed', problem: 'Authorization: Bearer must be followed by exactly one credential' };
  return { kind: 'bearer', value };
}

/** Schemes a client may reasonably send (RFC 9110's registry), the only words of the header worth repeating. */
const KNOWN_SCHEMES = /^(basic|digest|negotiate|token|bearer)$/i;

/**
 * A scheme is named back only when it is a known one: an unknown first word is often the key
 * itself sent without `Bearer`, and any part of it echoed in a 401 would leak the credential.
 */
function schemeName(scheme: string | undefined): string {
  return scheme !== undefined && KNOWN_SCHEMES.test(scheme)
    ? `the Authorization scheme ${JSON.stringify(scheme)}`
    : 'an unknown Authorization scheme';
}

import {
  createRemoteJWKSet,
  errors,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  jwtVerify,
} from 'jose';
import type { AuthSettings } from '../config/environment.ts';
import { SCOPES, type Scope } from '../config/licensees.ts';
import { presentedCredential } from './credential.ts';
import type { Principal } from './principal.ts';
import type { Authenticator, Verdict } from './verdict.ts';

type JwtSettings = Extract<AuthSettings, { mode: 'jwt' }>;

export interface KeySetTiming {
  /** How long fetched keys are used before they are fetched again (jose's cacheMaxAge). */
  cacheMaxAgeMs?: number;
  /** A token with an unknown kid refetches the keys, at most this often (jose's cooldownDuration). */
  cooldownMs?: number;
}

const SEND = 'send Authorization: Bearer <JWT>';
/** Tolerated clock difference with the token's issuer. */
const CLOCK_TOLERANCE_SECONDS = 5;

/**
 * GATEWAY_AUTH=jwt with jose: HS256 with JWT_SECRET, or RS256/ES256 with the keys of JWT_JWKS_URL
 * (fetched on first use, cached, fetched again when a token names a kid the cache lacks). The
 * algorithms are pinned, so a token cannot pick how it is checked (an HS256 token "signed" with
 * the public key of a JWKS is refused). The licensee claim must name a licensee of the file
 * (`known`, read for each token: a licensee removed by a reload is refused at once).
 */
export function jwtAuthenticator(
  settings: JwtSettings,
  known: { has(licenseeId: string): boolean },
  timing: KeySetTiming = {},
): Authenticator {
  const { key, algorithms } = verificationKey(settings.verify, timing);
  return async (request) => {
    const presented = presentedCredential(request.headers);
    if (presented.kind === 'missing') return { refused: `This gateway needs a token: ${SEND}.` };
    if (presented.kind === 'malformed')
      return { refused: `The credential is malformed (${presented.problem}): ${SEND}.` };
    if (presented.kind === 'api-key-header')
      return { refused: `X-Api-Key is not accepted here (this gateway checks JWTs): ${SEND}.` };
    let payload: JWTPayload;
    try {
      payload = await verifiedPayload(presented.value, key, {
        issuer: settings.issuer,
        audience: settings.audience,
        algorithms,
        requiredClaims: ['exp'],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
      });
    } catch (error) {
      return refusalOf(error);
    }
    const licenseeId = payload[settings.licenseeClaim];
    if (typeof licenseeId !== 'string' || !known.has(licenseeId)) {
      return {
        refused: `The token's "${settings.licenseeClaim}" claim does not name a licensee of this gateway: ${SEND} issued for your licensee.`,
      };
    }
    // Accepted until exp and the tolerance, as jwtVerify does: what the token opens ends then too.
    const expiresAt = ((payload.exp ?? 0) + CLOCK_TOLERANCE_SECONDS) * 1000;
    return {
      principal: {
        client: clientOf(payload),
        licenseeId,
        scopes: scopesOf(payload.scope),
        expiresAt,
      } satisfies Principal,
    };
  };
}

function verificationKey(
  verify: JwtSettings['verify'],
  timing: KeySetTiming,
): { key: Uint8Array | JWTVerifyGetKey; algorithms: string[] } {
  if ('secret' in verify) return { key: new TextEncoder().encode(verify.secret), algorithms: ['HS256'] };
  const keySet = createRemoteJWKSet(new URL(verify.jwksUrl), {
    cacheMaxAge: timing.cacheMaxAgeMs ?? 600_000,
    cooldownDuration: timing.cooldownMs ?? 30_000,
  });
  return { key: keySet, algorithms: ['RS256', 'ES256'] };
}

/**
 * jwtVerify, trying each candidate key when a token without `kid` matches several keys of its
 * algorithm (normal while keys rotate), as jose documents for JWKSMultipleMatchingKeys. No key
 * verifying it is a bad signature, the client's problem, not an unavailable key set.
 */
async function verifiedPayload(
  token: string,
  key: Uint8Array | JWTVerifyGetKey,
  options: JWTVerifyOptions,
): Promise<JWTPayload> {
  try {
    return (await jwtVerify(token, key, options)).payload;
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
    for await (const candidate of error) {
      try {
        return (await jwtVerify(token, candidate, options)).payload;
      } catch (candidateError) {
        if (!(candidateError instanceof errors.JWSSignatureVerificationFailed)) throw candidateError;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}

/**
 * The client's name for logs: the OAuth client (client_id, azp), else the fixed text `jwt`. Never
 * `sub`: it names a person (an id, often an email), and the audit line is written at info.
 */
function clientOf(payload: JWTPayload): string {
  const name = [payload.client_id, payload.azp].find((value) => typeof value === 'string' && value.length > 0);
  return typeof name === 'string' ? name.slice(0, 64) : 'jwt';
}

/** `scope`: one space-separated string (RFC 8693 section 4.2); scopes other than read, write and webhooks:manage are not this gateway's. */
function scopesOf(scope: unknown): ReadonlySet<Scope> {
  const words = typeof scope === 'string' ? scope.split(' ') : [];
  return new Set(SCOPES.filter((known) => words.includes(known)));
}

/** jose's failures as what the client should hear; its messages name claims, never values. */
function refusalOf(error: unknown): Verdict {
  if (keySetUnreachable(error))
    return { unavailable: 'The keys that check tokens (JWT_JWKS_URL) cannot be fetched now; try again shortly.' };
  if (error instanceof errors.JWTExpired) return { refused: `The token has expired: ${SEND} with a fresh token.` };
  if (error instanceof errors.JWTClaimValidationFailed)
    return { refused: `The token was refused (${error.message}): ${SEND} issued for this gateway.` };
  if (error instanceof errors.JOSEAlgNotAllowed)
    return { refused: `The token's signing algorithm is not accepted: ${SEND}.` };
  if (error instanceof errors.JWSSignatureVerificationFailed)
    return { refused: `The token's signature does not verify: ${SEND}.` };
  if (error instanceof errors.JWKSNoMatchingKey)
    return { refused: `No key of the gateway's key set matches the token: ${SEND}.` };
  // Anything else about the token (not a JWT, an unsupported header) is the client's to fix.
  return { refused: `The credential is not a valid JWT: ${SEND}.` };
}

/**
 * Only a key set that could not be fetched or read is the gateway's problem (503): a timeout, a
 * malformed set, jose's bare JOSEError for a non-200 or non-JSON answer, or fetch's own TypeError
 * for a refused connection.
 */
function keySetUnreachable(error: unknown): boolean {
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return true;
  if (error instanceof errors.JOSEError) return error.constructor === errors.JOSEError;
  return error instanceof TypeError && error.message === 'fetch failed';
}

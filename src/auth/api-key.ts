import { createHash, timingSafeEqual } from 'node:crypto';
import type { Licensee } from '../config/licensees.ts';
import { presentedCredential } from './credential.ts';
import type { Principal } from './principal.ts';
import type { Authenticator } from './verdict.ts';

const SEND = 'send Authorization: Bearer <API key> or X-Api-Key: <API key>';

/**
 * GATEWAY_AUTH=api-key: the presented key's SHA-256 is compared with every client's digest in
 * constant time (crypto.timingSafeEqual, and no early exit), so timing tells nothing about which
 * digest is close. Only digests are held: a leaked LICENSEES_FILE lets no one in.
 */
export function apiKeyAuthenticator(licensees: readonly Licensee[], previous?: ApiKeyClients): ApiKeyClients {
  const kept = new Map([...(previous?.principals ?? [])].map((principal) => [identityOf(principal), principal]));
  const clients = licensees.flatMap((licensee) =>
    licensee.clients.map((client) => {
      const principal: Principal = { client: client.name, licenseeId: licensee.id, scopes: new Set(client.scopes) };
      const digest = Buffer.from(client.apiKeySha256, 'hex');
      // A client the file still holds as it was keeps its principal: what it opened stays open.
      const same = kept.get(identityOf(principal, client.apiKeySha256));
      return { digest, principal: same ?? withKey(principal, client.apiKeySha256) };
    }),
  );
  const authenticate: Authenticator = (request) => {
    const presented = presentedCredential(request.headers);
    if (presented.kind === 'missing') return { refused: `This gateway needs an API key: ${SEND}.` };
    if (presented.kind === 'malformed')
      return { refused: `The credential is malformed (${presented.problem}): ${SEND}.` };
    const digest = createHash('sha256').update(presented.value, 'utf8').digest();
    let found: Principal | undefined;
    for (const client of clients) {
      if (timingSafeEqual(digest, client.digest)) found = client.principal;
    }
    return found
      ? { principal: found }
      : { refused: `The API key is not known to this gateway: ${SEND} with a key you were given.` };
  };
  return { authenticate, principals: new Set(clients.map((client) => client.principal)) };
}

/** The API keys' authenticator and the principals it lets in (one per client of the file). */
export interface ApiKeyClients {
  authenticate: Authenticator;
  principals: ReadonlySet<Principal>;
}

/** Which key digest each principal was let in with: a client is the same only with the same key. */
const keyOf = new WeakMap<Principal, string>();
const withKey = (principal: Principal, digest: string) => {
  keyOf.set(principal, digest);
  return principal;
};
const identityOf = (principal: Principal, digest = keyOf.get(principal)) =>
  JSON.stringify([principal.licenseeId, principal.client, digest, [...principal.scopes].sort()]);

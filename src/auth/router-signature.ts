import { useHmacSignatureValidation } from '@graphql-mesh/hmac-upstream-signature';
import { createGraphQLError, type GraphQLParams, type Plugin } from 'graphql-yoga';
import { ErrorCode } from '../error-codes.ts';

/**
 * ROUTER_HMAC_SECRET: this gateway serves only the company graph's router. Hive Gateway's
 * `hmacSignature` signs each request to a subgraph (an HMAC-SHA256 of the query and variables, in
 * `extensions["hmac-signature"]`), and `useHmacSignatureValidation` of the same library verifies it
 * here: an operation without it, or whose signature does not match, is refused with 401 and one
 * UNAUTHENTICATED error before its document is parsed, so nothing runs and no upstream call is made.
 * The client's own credential, forwarded by the router, still decides its licensee and scopes.
 * An `onParams` hook: it holds on every door (HTTP, SSE and graphql-ws pass the same pipeline).
 */
export interface RouterSignature {
  /** For Yoga's plugins: refuses operations not signed by the router. */
  plugin: Plugin;
}

/** What the signature covers (the query and variables) and where it is (`extensions`). */
type SignedParams = Pick<GraphQLParams, 'query' | 'extensions'> & { variables?: Record<string, unknown> | null };

export function routerSignature(secret: string): RouterSignature {
  const validation = useHmacSignatureValidation({ secret });
  const fetchAPI = { TextEncoder, crypto: globalThis.crypto };
  const verify = async (params: SignedParams) => {
    try {
      // The library's check: it throws for a missing, malformed or forged signature.
      await validation.onParams!({ params: withCallbackSignature(params), fetchAPI } as never);
    } catch {
      throw refused();
    }
  };
  return {
    plugin: {
      // Gives the library's plugin Yoga's logger (it logs a forged signature's refusal, never the secret).
      onYogaInit: (payload) => validation.onYogaInit?.(payload as never),
      onParams: ({ params }) => verify(params),
    },
  };
}

/**
 * Hive Gateway's http-callback transport (a subscription through router callbacks) sends the
 * request's own extensions one level down, beside `subscription`: `extensions: { query, variables,
 * extensions: { "hmac-signature": … }, subscription: {…} }`. The signature is then read from there;
 * it is checked against the query and variables all the same.
 */
function withCallbackSignature(params: SignedParams): SignedParams {
  const extensions = params.extensions as Record<string, unknown> | undefined;
  const nested = extensions?.extensions as Record<string, unknown> | undefined;
  if (!extensions?.subscription || extensions[SIGNATURE] !== undefined || nested?.[SIGNATURE] === undefined)
    return params;
  return { ...params, extensions: { ...extensions, [SIGNATURE]: nested[SIGNATURE] } };
}

/** Where Hive Gateway's `hmacSignature` puts the signature (the library's default extension name). */
const SIGNATURE = 'hmac-signature';

function refused() {
  return createGraphQLError(
    'This subgraph answers only operations signed by the company graph’s router (ROUTER_HMAC_SECRET): send it through the router.',
    { extensions: { code: ErrorCode.UNAUTHENTICATED, http: { status: 401 } } },
  );
}

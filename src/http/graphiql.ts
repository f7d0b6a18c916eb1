import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { Plugin } from 'graphql-yoga';
import type { Config } from '../config/environment.ts';

/** The query GraphiQL opens on; also a typed test operation (codegen reads the same file). */
export const EXAMPLE_QUERY = readFileSync(new URL('./graphiql-example.graphql', import.meta.url), 'utf8');

/**
 * With client authentication on, GraphiQL opens its headers pane with a placeholder credential to
 * replace. The pane is not persisted (GraphiQL's default), so a key is not left in localStorage.
 */
function graphiqlCredentialHint(mode: Config['auth']['mode']): {
  headers?: string;
  defaultEditorToolsVisibility?: 'headers';
} {
  if (mode === 'none') return {};
  const credential = mode === 'jwt' ? 'Bearer <your JWT>' : 'Bearer <your API key>';
  return { headers: JSON.stringify({ Authorization: credential }, null, 2), defaultEditorToolsVisibility: 'headers' };
}

/** What Yoga's GraphiQL renders: the example query and the credential hint. */
export function graphiqlOptions(mode: Config['auth']['mode']): Record<string, unknown> {
  return { title: 'Reservation gateway', defaultQuery: EXAMPLE_QUERY, ...graphiqlCredentialHint(mode) };
}

/** The page, ready to send: its text, its policy, and its compressed forms made once each. */
interface Page {
  html: Buffer;
  policy: string;
  encoded: Map<'br' | 'gzip', Promise<Buffer>>;
}

const compress = {
  // Quality 5: a ninth of the page's 9 MB in about half a second; 11 would take half a minute.
  br: (html: Buffer) =>
    promisify(brotliCompress)(html, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_SIZE_HINT]: html.length },
    }),
  gzip: (html: Buffer) => promisify(gzip)(html, { level: 6 }),
};

/**
 * The page's Content-Security-Policy. Its one inline script (the whole GraphiQL bundle) runs by its
 * hash, nothing else does; the editor's workers start from blob: URLs the script makes; its styles
 * are inline and injected at run time (Monaco), so styles, which cannot run code, stay inline; it
 * talks to its own origin only. `frame-ancestors 'none'`: no page of another site can frame it and
 * trick a user into running a document it prefilled (`?query=`).
 */
function policyFor(html: string): string {
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    (match) => `'sha256-${createHash('sha256').update(match[1]!, 'utf8').digest('base64')}'`,
  );
  return [
    "default-src 'none'",
    `script-src ${scripts.join(' ')}`,
    'worker-src blob:',
    "style-src 'unsafe-inline'",
    'img-src data:',
    'font-src data:',
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The encoding to answer with: br, then gzip, when Accept-Encoding allows it (a q of 0 refuses one). */
export function preferredEncoding(acceptEncoding: string | null): 'br' | 'gzip' | undefined {
  const accepted = new Map(
    (acceptEncoding ?? '').split(',').map((entry) => {
      const [name = '', ...params] = entry.trim().toLowerCase().split(';');
      const q = params.map((param) => /^\s*q=([\d.]+)\s*$/.exec(param)?.[1]).find((value) => value !== undefined);
      return [name.trim(), q === undefined ? 1 : Number(q)] as const;
    }),
  );
  const allows = (name: string) => (accepted.get(name) ?? accepted.get('*') ?? 0) > 0;
  return allows('br') ? 'br' : allows('gzip') ? 'gzip' : undefined;
}

/**
 * GraphiQL at `endpoint` for a browser's GET (Accept: text/html, as Yoga decides), when `enabled`
 * (GRAPHIQL); answered before authentication, as the page holds no data. The page is rendered
 * once, on first use (its bundle costs ~48 MiB in memory once loaded), and sent compressed.
 * Off, such a request is told so with a 404 instead of a page.
 */
export function useGraphiql(options: { enabled: boolean; endpoint: string; mode: Config['auth']['mode'] }): Plugin {
  let page: Promise<Page> | undefined;
  const render = async (): Promise<Page> => {
    const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
    const html = renderGraphiQL(graphiqlOptions(options.mode));
    return { html: Buffer.from(html, 'utf8'), policy: policyFor(html), encoded: new Map() };
  };
  return {
    // Not async: a hook that returns a promise makes every request wait a turn for it.
    onRequest({ request, url, endResponse, fetchAPI }) {
      if (request.method !== 'GET' || !request.headers.get('accept')?.includes('text/html')) return;
      if (url.pathname !== options.endpoint && url.pathname !== `${options.endpoint}/`) return;
      if (!options.enabled) {
        // A GET with a query is an operation (Yoga answers it, or refuses it as it would without a browser).
        if (url.searchParams.has('query')) return;
        const message =
          'GraphiQL is off on this gateway (GRAPHIQL=off). Send GraphQL requests as POST with ' +
          'Content-Type: application/json.\n';
        return endResponse(
          new fetchAPI.Response(message, { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } }),
        );
      }
      return servePage(request, endResponse, fetchAPI);
    },
  };

  async function servePage(
    request: Request,
    endResponse: (response: Response) => void,
    fetchAPI: { Response: typeof Response },
  ): Promise<void> {
    const { html, policy, encoded } = await (page ??= render());
    const encoding = preferredEncoding(request.headers.get('accept-encoding'));
    let body = html;
    if (encoding) {
      if (!encoded.has(encoding)) encoded.set(encoding, compress[encoding](html));
      body = await encoded.get(encoding)!;
    }
    const headers: Record<string, string> = {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': policy,
      'x-frame-options': 'DENY',
      'cache-control': 'no-cache',
      vary: 'Accept-Encoding',
      ...(encoding ? { 'content-encoding': encoding } : {}),
    };
    // A Buffer is a Uint8Array; only its type allows a SharedArrayBuffer under it (these are never one).
    endResponse(new fetchAPI.Response(body as Uint8Array<ArrayBuffer>, { status: 200, headers }));
  }
}

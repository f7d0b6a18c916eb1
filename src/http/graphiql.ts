import { readFileSync } from 'node:fs';
import type { YogaServerOptions } from 'graphql-yoga';
import type { Config } from '../config/environment.ts';

/** The query GraphiQL opens on; also a typed test operation (codegen reads the same file). */
export const EXAMPLE_QUERY = readFileSync(new URL('./graphiql-example.graphql', import.meta.url), 'utf8');

/**
 * With client authentication on, GraphiQL opens its headers pane with a placeholder credential to
 * replace. The pane is not persisted (GraphiQL's default), so a key is not left in localStorage.
 */
function graphiqlCredentialHint(mode: Config['auth']['mode']): { headers?: string; defaultEditorToolsVisibility?: 'headers' } {
  if (mode === 'none') return {};
  const credential = mode === 'jwt' ? 'Bearer <your JWT>' : 'Bearer <your API key>';
  return { headers: JSON.stringify({ Authorization: credential }, null, 2), defaultEditorToolsVisibility: 'headers' };
}

/** Yoga's GraphiQL options: the example query, the credential hint, and the page loaded on first use. */
export function graphiqlOptions(mode: Config['auth']['mode']): Pick<YogaServerOptions<object, object>, 'graphiql' | 'renderGraphiQL'> {
  return {
    graphiql: { title: 'Reservation gateway', defaultQuery: EXAMPLE_QUERY, ...graphiqlCredentialHint(mode) },
    // The GraphiQL page (a bundle of ~48 MiB in memory once loaded) is imported when a browser first asks for it.
    renderGraphiQL: async (options) => (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(options),
  };
}

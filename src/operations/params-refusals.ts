import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';

/**
 * Makes a refusal thrown by an `onParams` hook (a document not in the manifest, a persisted query
 * not found, a router signature missing, input past its bounds, a credential refused) the
 * operation's result, on every door, instead of an exception only HTTP's request handler catches:
 * Yoga then runs every `onExecutionResult` hook on it, so the codes are recorded, audited and
 * counted as any other result's, and a socket answers it as HTTP does. Once one hook has refused,
 * the later hooks do not run for that operation (they would read parameters already refused).
 */
const REFUSED = { query: '{ __typename }' };

export function paramsRefusalsAsResults(plugins: Plugin[], mask: (error: unknown) => Error): Plugin[] {
  /** The operations (their contexts) already refused. */
  const refused = new WeakSet<object>();
  type OnParams = NonNullable<Plugin['onParams']>;
  type Payload = Parameters<OnParams>[0];
  const refuse = (payload: Payload, error: unknown) => {
    refused.add(payload.context);
    // Yoga's own checks of the parameters come after every plugin's: they see well-formed ones, not the refused.
    payload.setParams(REFUSED);
    const masked = mask(error);
    payload.setResult({ errors: [masked instanceof GraphQLError ? masked : new GraphQLError(masked.message)] });
  };
  const guarded =
    (hook: OnParams): OnParams =>
    (payload) => {
      if (refused.has(payload.context)) return;
      try {
        const done = hook(payload) as unknown;
        if (typeof (done as PromiseLike<void> | undefined)?.then !== 'function') return;
        return Promise.resolve(done as PromiseLike<void>).catch((error: unknown) => refuse(payload, error));
      } catch (error) {
        refuse(payload, error);
      }
    };
  return plugins.map((plugin) =>
    plugin.onParams
      ? Object.assign(Object.create(Object.getPrototypeOf(plugin) as object) as Plugin, plugin, {
          onParams: guarded(plugin.onParams.bind(plugin)),
        })
      : plugin,
  );
}

import type { Layer } from '../call.ts';
import { TokenRejectedError } from '../errors.ts';
import type { TokenManager } from '../tokens.ts';

type Logger = { debug(obj: object, msg: string): void };

/**
 * Gives the call the licensee's token (waiting no longer than the call's deadline). A token the
 * service rejects is dropped, and the call repeated once with a fresh one. It sits outside retry
 * and breaker: the authenticate behind a token never waits on the data calls' breaker.
 */
export function tokenLayer(tokens: TokenManager, logger?: Logger): Layer {
  return (next) => async (call) => {
    const token = await tokens.get(call.licensee, call.deadline);
    try {
      return await next({ ...call, token });
    } catch (error) {
      if (!(error instanceof TokenRejectedError)) throw error;
      await tokens.reject(call.licensee, token);
      logger?.debug({ endpoint: call.name, licensee: call.licensee.systemIdentifier }, 'token rejected; authenticating again');
      const fresh = await tokens.get(call.licensee, call.deadline);
      try {
        return await next({ ...call, token: fresh });
      } catch (again) {
        if (again instanceof TokenRejectedError) await tokens.reject(call.licensee, fresh);
        throw again;
      }
    }
  };
}

import type { Layer } from '../call.ts';
import { TokenRejectedError } from '../errors.ts';
import type { TokenManager } from '../tokens.ts';

type Logger = { debug(obj: object, msg: string): void };

/**
 * Gives the call the licensee's token (waiting no longer than the call's deadline). A token the
 * service refuses, in any form and at any age, is dropped and the call repeated once with a token
 * obtained after the refusal, shared with every call that saw the same token refused
 * (TokenManager.renewRefused). It sits outside retry and breaker: the authenticate behind a token
 * never waits on the data calls' breaker.
 *
 * A refusal in words alone may be a client's value echoed back: when the repeat is refused in the
 * same words, the answer is passed on as the service's refusal and the echo remembered
 * (token-echoes.ts), so that its repeats, and a flood of others, renew no more tokens.
 */
export function tokenLayer(tokens: TokenManager, logger?: Logger): Layer {
  return (next) => async (call) => {
    const log = { endpoint: call.name, licensee: call.licensee.systemIdentifier };
    const held = await tokens.lease(call.licensee, call.deadline);
    let inWords: boolean;
    try {
      return await next({ ...call, token: held.token });
    } catch (error) {
      if (!(error instanceof TokenRejectedError)) throw error;
      inWords = error.wordsOnly !== undefined;
      if (error.wordsOnly && !tokens.echoes.mayRenew(call)) {
        logger?.debug(log, 'a message names the token as refused, but such words proved to be data; passed on');
        throw error.wordsOnly.refusal;
      }
      logger?.debug(log, inWords ? 'token refused in words; renewing it' : 'token refused; renewing it');
    }
    const fresh = await tokens.renewRefused(call.licensee, held.token, call.deadline);
    try {
      return await next({ ...call, token: fresh.token });
    } catch (again) {
      if (!(again instanceof TokenRejectedError)) throw again;
      if (again.wordsOnly) {
        // Words again with a token obtained after the first refusal: they were the data's.
        if (inWords) tokens.echoes.proven(call);
        throw again.wordsOnly.refusal;
      }
      await tokens.reject(call.licensee, fresh.token);
      throw again;
    }
  };
}

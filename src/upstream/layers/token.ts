import type { Layer } from '../call.ts';
import { TokenRejectedError } from '../errors.ts';
import type { HeldToken, TokenManager } from '../tokens.ts';

type Logger = { debug(obj: object, msg: string): void };

/**
 * Gives the call the licensee's token (waiting no longer than the call's deadline). A token the
 * service rejects is dropped, and the call repeated once with a fresh one. It sits outside retry
 * and breaker: the authenticate behind a token never waits on the data calls' breaker.
 *
 * A rejection in words alone may be a client's value echoed back: the token is renewed for it only
 * as TokenManager.renewRefusedByWords allows, and otherwise, or when the repeated call gets words
 * again, the answer is passed on as the service's refusal, so such a value never fails every request.
 */
export function tokenLayer(tokens: TokenManager, logger?: Logger): Layer {
  return (next) => async (call) => {
    const log = { endpoint: call.name, licensee: call.licensee.systemIdentifier };
    const held = await tokens.lease(call.licensee, call.deadline);
    let fresh: HeldToken;
    try {
      return await next({ ...call, token: held.token });
    } catch (error) {
      if (!(error instanceof TokenRejectedError)) throw error;
      if (error.wordsOnly) {
        const renewed = await tokens.renewRefusedByWords(call.licensee, held, call.deadline);
        if (!renewed) {
          logger?.debug(
            log,
            'a message names the token as refused, too soon to renew it for words; passed on as the service’s refusal',
          );
          throw error.wordsOnly.refusal;
        }
        logger?.debug(log, 'a message names the token as refused; repeating with a renewed one');
        fresh = renewed;
      } else {
        await tokens.reject(call.licensee, held.token);
        logger?.debug(log, 'token rejected; authenticating again');
        fresh = await tokens.lease(call.licensee, call.deadline);
      }
    }
    try {
      return await next({ ...call, token: fresh.token });
    } catch (again) {
      if (!(again instanceof TokenRejectedError)) throw again;
      // The same words with the token just given: they were the data, not the token.
      if (again.wordsOnly) throw again.wordsOnly.refusal;
      await tokens.reject(call.licensee, fresh.token);
      throw again;
    }
  };
}

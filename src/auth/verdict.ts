import type { Principal } from './principal.ts';

/**
 * The outcome of checking a credential: who the request acts for, why it is refused (the
 * client's fault: 401), or that it cannot be checked now (the identity provider's keys are out of
 * reach: 503).
 */
export type Verdict = { principal: Principal } | { refused: string } | { unavailable: string };

/**
 * Checks one request's credential; never calls the upstream service. A verdict known at once is
 * returned as is: a promise would make every request's parsing wait a turn of the event loop.
 */
export type Authenticator = (request: Request) => Verdict | Promise<Verdict>;

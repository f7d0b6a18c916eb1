import type { UpstreamAccount } from './account.ts';
import type { CallPriority } from './budget.ts';
import type { AnyEndpoint, EndpointName } from './endpoints.ts';

/** One upstream call as it passes the layers of the call path (see client.ts for their order). */
export interface UpstreamCall {
  licensee: UpstreamAccount;
  name: EndpointName;
  endpoint: AnyEndpoint;
  /** The parameters, checked and converted to wire values; never the token. */
  params: Record<string, unknown>;
  /** Absolute time (ms since epoch) after which nothing more is started or waited for. */
  deadline: number;
  /** Set by the token layer; authenticate carries none. */
  token?: string;
  /** Told each time an attempt of this call is actually sent (not for cache hits or shared calls). */
  onSent?: () => void;
  /** Told when the budget refused this read and a kept copy answered it instead, with that copy's age. */
  onStale?: (ageMs: number) => void;
  /** Whose turn comes first when calls wait for the budget (see CallPriority). */
  priority?: CallPriority;
  /** A read-ahead: each attempt takes a budget slot only if one is free at once (RateBudget.acquireIfFree), never queues. */
  onlyIfFree?: boolean;
  /** false: the answer is shared while in flight, but neither kept for later reads nor as a stale copy (see CallOptions.keep). */
  keep?: boolean;
  /** The read must reach the service (see CallOptions.fresh). */
  fresh?: boolean;
}

/** Sends a call on and resolves to its decoded answer. */
export type Send = (call: UpstreamCall) => Promise<unknown>;

/** One job of the call path, wrapped around the rest of it (as undici's interceptors are). */
export type Layer = (next: Send) => Send;

/** A layer with the name the order test and the logs know it by. */
export interface NamedLayer {
  name: string;
  layer: Layer;
}

/** The first layer is the outermost: a call passes the layers in the order given, then `last`. */
export function compose(layers: readonly NamedLayer[], last: Send): Send {
  return layers.reduceRight<Send>((next, { layer }) => layer(next), last);
}

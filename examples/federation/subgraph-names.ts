/**
 * The name this gateway's subgraph has in the supergraph. Federation gateways forward the client's
 * credential to the subgraph of this name only (gateway.config.ts), so composing it under another
 * name would silently stop the forwarding.
 */
export const RESERVATIONS_SUBGRAPH = 'reservations';

import { changesAmong, instantOf } from '../changes/change.ts';
import { upstreamSource } from '../changes/upstream-source.ts';
import type { Delivery, DeliveryStatus } from '../webhooks/delivery-store.ts';
import type { WebhookEndpoint } from '../webhooks/endpoint-store.ts';
import type { ChangesSince, EndpointInput, WebhookManagement } from '../webhooks/management.ts';
import type { GatewayContext } from './context.ts';
import { getEvent } from './event.ts';

/*
 * What the webhook management fields do (docs/webhooks.md), for the request's licensee only: the
 * management itself is src/webhooks/management.ts; these functions hand it the request's licensee,
 * client and reads of the service. The `webhooks:manage` scope is checked once, before anything
 * runs (each field declares it: src/schema/scopes.ts, enforced by src/auth/scopes.ts).
 */

/** The gateway's webhook management (gateway.ts sets it on every request's context). */
function managing(ctx: GatewayContext): WebhookManagement {
  if (!ctx.webhooks) throw new Error('webhook management needs the gateway’s webhooks in the context');
  return ctx.webhooks;
}

const licenseeOf = (ctx: GatewayContext) => ctx.account.systemIdentifier;

/** Whether the licensee's account has the event (another licensee's is not found). */
const eventCheck = (ctx: GatewayContext) => async (eventId: number) => (await getEvent(ctx, eventId)) !== null;

export function listWebhookEndpoints(ctx: GatewayContext): Promise<WebhookEndpoint[]> {
  return managing(ctx).list(licenseeOf(ctx));
}

/** One of the licensee's endpoints; null for any other id. */
export async function getWebhookEndpoint(ctx: GatewayContext, id: string): Promise<WebhookEndpoint | null> {
  return (await managing(ctx).get(licenseeOf(ctx), id)) ?? null;
}

/** The deliveries waiting for an endpoint, and when the oldest was queued. */
export function getWebhookBacklog(ctx: GatewayContext, endpoint: WebhookEndpoint) {
  return managing(ctx).backlog(endpoint);
}

/** Every delivery kept for an endpoint, newest first, in one state when asked. */
export function listWebhookDeliveries(
  ctx: GatewayContext,
  endpoint: WebhookEndpoint,
  status?: DeliveryStatus | null,
): Promise<Delivery[]> {
  return managing(ctx).deliveries(endpoint, { first: Number.MAX_SAFE_INTEGER, ...(status ? { status } : {}) });
}

export function createWebhookEndpoint(ctx: GatewayContext, input: EndpointInput) {
  return managing(ctx).create(licenseeOf(ctx), input, eventCheck(ctx), ctx.principal.client);
}

export function updateWebhookEndpoint(ctx: GatewayContext, id: string, input: EndpointInput) {
  return managing(ctx).update(licenseeOf(ctx), id, input, eventCheck(ctx), ctx.principal.client);
}

export function deleteWebhookEndpoint(ctx: GatewayContext, id: string) {
  return managing(ctx).delete(licenseeOf(ctx), id, ctx.principal.client);
}

export function setWebhookEndpointEnabled(ctx: GatewayContext, id: string, enabled: boolean) {
  return managing(ctx).setEnabled(licenseeOf(ctx), id, enabled, ctx.principal.client);
}

export function rotateWebhookSecret(ctx: GatewayContext, id: string, previousSecretValidFor: number) {
  return managing(ctx).rotate(licenseeOf(ctx), id, previousSecretValidFor, ctx.principal.client);
}

export function pingWebhookEndpoint(ctx: GatewayContext, id: string) {
  return managing(ctx).ping(licenseeOf(ctx), id, ctx.principal.client);
}

export function redeliverWebhook(ctx: GatewayContext, deliveryId: string) {
  return managing(ctx).redeliver(licenseeOf(ctx), deliveryId, ctx.principal.client);
}

/**
 * The changes of one of the request licensee's events since an instant, read as a feed reads them:
 * every page, at background priority, within the licensee's budget.
 */
const changesSince =
  (ctx: GatewayContext): ChangesSince =>
  async (eventId, since) =>
    changesAmong(
      await upstreamSource(ctx.upstream, ctx.account, eventId, { priority: 'background' }).read(
        new Date(since).toISOString(),
      ),
      new Map(),
      since,
    );

/** Recovers an endpoint from `since` (ISO 8601), of the events named or all of its own. */
export function recoverWebhookEndpoint(
  ctx: GatewayContext,
  args: { id: string; since: string; eventIds?: readonly number[] | null },
) {
  return managing(ctx).recover(
    licenseeOf(ctx),
    args.id,
    instantOf(args.since),
    changesSince(ctx),
    ctx.principal.client,
    // The service's clock, when ahead of ours: `since` is in its time.
    Math.max(Date.now(), ctx.upstream.serviceNow()),
    args.eventIds,
  );
}

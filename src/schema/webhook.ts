import { resolveArrayConnection } from '@pothos/plugin-relay';
import type { CHANGE_KINDS } from '../changes/change.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookBacklog,
  getWebhookEndpoint,
  listWebhookDeliveries,
  listWebhookEndpoints,
  pingWebhookEndpoint,
  recoverWebhookEndpoint,
  redeliverWebhook,
  rotateWebhookSecret,
  setWebhookEndpointEnabled,
  updateWebhookEndpoint,
} from '../resolvers/webhook.ts';
import type { Delivery, DeliveryAttempt } from '../webhooks/delivery-store.ts';
import type { WebhookEndpoint as EndpointModel } from '../webhooks/endpoint-store.ts';
import {
  type EndpointInput,
  MAX_EVENTS_PER_ENDPOINT,
  type UserError as UserErrorModel,
} from '../webhooks/management.ts';
import { builder } from './builder.ts';
import { costs, costsNothing, type Rule } from './cost.ts';
import { ReservationChangeKind } from './reservation-change.ts';
import { needs } from './scopes.ts';

/*
 * Webhook management (docs/webhooks.md): a client with the `webhooks:manage` scope registers and
 * manages its licensee's endpoints, and needs neither `read` nor `write` for it (each root field
 * declares the scope; nothing else checks it). Every field acts for the request's licensee only
 * (src/resolvers/webhook.ts); what the client got wrong is answered in `userErrors`, with nothing saved.
 */

const iso = (ms: number | null | undefined) => (ms == null ? null : new Date(ms).toISOString());

/** Checking the events of an input costs one event read each (counted as one write at least, as every mutation). */
const eventChecks: Rule = (_scope, args) => {
  const input = args.input as { eventIds?: unknown[] | null } | undefined;
  return { calls: Math.max(1, Array.isArray(input?.eventIds) ? Math.min(input.eventIds.length, 100) : 0) };
};
/** The other management mutations call no upstream; counted as one write, as every mutation is. */
const managementWrite: Rule = () => ({ calls: 1 });

const WebhookDeliveryStatus = builder.enumType('WebhookDeliveryStatus', {
  description: 'Where a webhook delivery stands.',
  values: {
    PENDING: { value: 'PENDING', description: 'Waiting for its first attempt or its next one.' },
    SUCCEEDED: { value: 'SUCCEEDED', description: 'The endpoint answered 2xx.' },
    FAILED: {
      value: 'FAILED',
      description: 'Every attempt of the schedule failed, or the endpoint answered 410; redeliverable.',
    },
  } as const,
});

const UserError = builder.objectRef<UserErrorModel>('UserError').implement({
  description: 'Something the client got wrong in a mutation: nothing was saved or sent.',
  fields: (t) => ({
    field: t.stringList({
      nullable: true,
      description: 'The path of the argument at fault (`["input", "url"]`); null for the request as a whole.',
      ...costsNothing,
      resolve: (error) => error.field,
    }),
    message: t.exposeString('message', { description: 'What is wrong, and what to do.', ...costsNothing }),
  }),
});

const WebhookAttempt = builder.objectRef<DeliveryAttempt>('WebhookAttempt').implement({
  description: 'One attempt of a delivery.',
  fields: (t) => ({
    at: t.field({ type: 'DateTime', description: 'When it was sent.', ...costsNothing, resolve: (a) => iso(a.at)! }),
    status: t.int({
      nullable: true,
      description: 'The HTTP status answered; null when there was no answer.',
      ...costsNothing,
      resolve: (a) => a.status,
    }),
    latencyMs: t.exposeInt('latencyMs', { description: 'How long the attempt took, in ms.', ...costsNothing }),
    error: t.string({
      nullable: true,
      description: 'Why there was no answer (refused address, connection failure, timeout).',
      ...costsNothing,
      resolve: (a) => a.error ?? null,
    }),
  }),
});

const WebhookDelivery = builder.objectRef<Delivery>('WebhookDelivery').implement({
  description: 'One message to one endpoint, with its attempts.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The delivery’s id, for `redeliverWebhook`.', ...costsNothing }),
    webhookId: t.exposeString('messageId', {
      description: 'The `webhook-id` header: the same on every attempt and on a redelivery.',
      ...costsNothing,
    }),
    type: t.exposeString('type', {
      description:
        'The message’s type: `reservation.created`, `reservation.changed`, `reservation.cancelled` or `webhook.test`.',
      ...costsNothing,
    }),
    status: t.field({
      type: WebhookDeliveryStatus,
      description: 'Where it stands.',
      ...costsNothing,
      resolve: (d) => d.status,
    }),
    createdAt: t.field({
      type: 'DateTime',
      description: 'When it was queued.',
      ...costsNothing,
      resolve: (d) => iso(d.createdAt)!,
    }),
    nextAttemptAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it is next tried; null once it succeeded or failed.',
      ...costsNothing,
      resolve: (d) => (d.status === 'PENDING' ? iso(d.nextAttemptAt) : null),
    }),
    attempts: t.field({
      type: [WebhookAttempt],
      description: 'Its attempts, oldest first.',
      ...costsNothing,
      resolve: (d) => d.attempts,
    }),
  }),
});

const WebhookEndpoint = builder.objectRef<EndpointModel>('WebhookEndpoint').implement({
  description: 'Where the licensee’s reservation changes are sent as signed webhooks (Standard Webhooks).',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The endpoint’s id.', ...costsNothing }),
    url: t.exposeString('url', { description: 'Where deliveries are POSTed (HTTPS).', ...costsNothing }),
    eventIds: t.exposeIntList('eventIds', { description: 'The events whose changes are sent.', ...costsNothing }),
    kinds: t.field({
      type: [ReservationChangeKind],
      description: 'The kinds of change sent.',
      ...costsNothing,
      resolve: (e) => e.kinds,
    }),
    description: t.exposeString('description', {
      nullable: true,
      description: 'The client’s own words for it.',
      ...costsNothing,
    }),
    enabled: t.exposeBoolean('enabled', { description: 'Whether changes are sent to it.', ...costsNothing }),
    disabledReason: t.exposeString('disabledReason', {
      nullable: true,
      description: 'Why it is disabled: by its client, a 410 answer, or every attempt failing for days.',
      ...costsNothing,
    }),
    failingSince: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Since when every attempt has failed; null after a success.',
      ...costsNothing,
      resolve: (e) => iso(e.failingSince),
    }),
    createdAt: t.field({
      type: 'DateTime',
      description: 'When it was registered.',
      ...costsNothing,
      resolve: (e) => iso(e.createdAt)!,
    }),
    pendingDeliveries: t.int({
      description: 'Deliveries waiting for it.',
      ...costsNothing,
      resolve: async (e, _args, ctx) => (await getWebhookBacklog(ctx, e)).pending,
    }),
    oldestPendingAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the oldest delivery waiting for it was queued; null when none waits.',
      ...costsNothing,
      resolve: async (e, _args, ctx) => iso((await getWebhookBacklog(ctx, e)).oldestCreatedAt),
    }),
    deliveries: t.connection(
      {
        type: WebhookDelivery,
        description: 'Its deliveries, newest first (the latest 1,000 finished ones, and every pending one).',
        args: {
          status: t.arg({ type: WebhookDeliveryStatus, description: 'Only deliveries in this state.' }),
        },
        ...costsNothing,
        resolve: async (e, args, ctx) => {
          const all = await listWebhookDeliveries(ctx, e, args.status);
          return { ...resolveArrayConnection({ args }, all), totalCount: all.length };
        },
      },
      { name: 'WebhookDeliveryConnection', description: 'A page of webhook deliveries.' },
      { name: 'WebhookDeliveryEdge', description: 'A webhook delivery and its cursor.' },
    ),
  }),
});

const CreateWebhookEndpointInput = builder.inputType('CreateWebhookEndpointInput', {
  description: 'A new webhook endpoint.',
  fields: (t) => ({
    url: t.string({
      required: true,
      description: 'Where deliveries go: HTTPS, a host whose every address is public, no credentials in it.',
    }),
    eventIds: t.intList({ required: true, description: 'The licensee’s events whose changes are sent (1 to 100).' }),
    kinds: t.field({
      type: [ReservationChangeKind],
      description: 'The kinds of change sent; all when left out.',
    }),
    description: t.string({ description: 'The client’s own words for it (at most 500 characters).' }),
  }),
});

const UpdateWebhookEndpointInput = builder.inputType('UpdateWebhookEndpointInput', {
  description: 'What changes in a webhook endpoint; what is left out stays.',
  fields: (t) => ({
    url: t.string({ description: 'Where deliveries go, checked as at registration.' }),
    eventIds: t.intList({ description: 'The events whose changes are sent.' }),
    kinds: t.field({ type: [ReservationChangeKind], description: 'The kinds of change sent.' }),
    description: t.string({ description: 'The client’s own words for it.' }),
  }),
});

interface EndpointOutcome {
  endpoint?: EndpointModel;
  secret?: string;
  userErrors: UserErrorModel[];
}

/** What every payload's `userErrors` says it is. */
const USER_ERRORS = 'What the client got wrong; empty when the mutation was done.';

/**
 * A mutation's answer about one endpoint: the endpoint (null with user errors), its signing secret
 * when the mutation made one (`secret`: that field's description; shown this once), the user errors.
 */
function endpointPayload(name: string, description: string, secret?: string) {
  return builder.objectRef<EndpointOutcome>(name).implement({
    description,
    fields: (t) => ({
      endpoint: t.field({
        type: WebhookEndpoint,
        nullable: true,
        description: 'The endpoint; null when there are user errors.',
        ...costsNothing,
        resolve: (o) => o.endpoint ?? null,
      }),
      ...(secret
        ? {
            secret: t.string({
              nullable: true,
              description: secret,
              ...costsNothing,
              resolve: (o) => o.secret ?? null,
            }),
          }
        : {}),
      userErrors: t.field({
        type: [UserError],
        description: USER_ERRORS,
        ...costsNothing,
        resolve: (o) => o.userErrors,
      }),
    }),
  });
}

const CreateWebhookEndpointPayload = endpointPayload(
  'CreateWebhookEndpointPayload',
  'The endpoint registered, and its signing secret, shown this once.',
  'The signing secret (`whsec_…`), answered only here: keep it to verify deliveries.',
);

const WebhookEndpointPayload = endpointPayload('WebhookEndpointPayload', 'The endpoint as it is after the mutation.');

const RotateWebhookSecretPayload = endpointPayload(
  'RotateWebhookSecretPayload',
  'The endpoint with its new secret, shown this once.',
  'The new signing secret (`whsec_…`), answered only here.',
);

const DeleteWebhookEndpointPayload = builder
  .objectRef<{ deletedId?: string; userErrors: UserErrorModel[] }>('DeleteWebhookEndpointPayload')
  .implement({
    description: 'The endpoint deleted, with its queued deliveries.',
    fields: (t) => ({
      deletedId: t.id({
        nullable: true,
        description: 'The id of the endpoint deleted; null when there are user errors.',
        ...costsNothing,
        resolve: (o) => o.deletedId ?? null,
      }),
      userErrors: t.field({
        type: [UserError],
        description: USER_ERRORS,
        ...costsNothing,
        resolve: (o) => o.userErrors,
      }),
    }),
  });

const WebhookDeliveryPayload = builder
  .objectRef<{ delivery?: Delivery; userErrors: UserErrorModel[] }>('WebhookDeliveryPayload')
  .implement({
    description: 'The delivery queued.',
    fields: (t) => ({
      delivery: t.field({
        type: WebhookDelivery,
        nullable: true,
        description: 'The delivery; null when there are user errors.',
        ...costsNothing,
        resolve: (o) => o.delivery ?? null,
      }),
      userErrors: t.field({
        type: [UserError],
        description: USER_ERRORS,
        ...costsNothing,
        resolve: (o) => o.userErrors,
      }),
    }),
  });

builder.queryField('webhookEndpoints', (t) =>
  t.connection(
    {
      type: WebhookEndpoint,
      description: 'The licensee’s webhook endpoints, oldest first (needs the `webhooks:manage` scope).',
      ...costsNothing,
      ...needs('webhooks:manage'),
      resolve: async (_root, args, ctx) => {
        const all = await listWebhookEndpoints(ctx);
        return { ...resolveArrayConnection({ args }, all), totalCount: all.length };
      },
    },
    { name: 'WebhookEndpointConnection', description: 'A page of webhook endpoints.' },
    { name: 'WebhookEndpointEdge', description: 'A webhook endpoint and its cursor.' },
  ),
);

builder.queryField('webhookEndpoint', (t) =>
  t.field({
    type: WebhookEndpoint,
    nullable: true,
    description: 'One of the licensee’s webhook endpoints; null for any other id (needs `webhooks:manage`).',
    args: { id: t.arg.id({ required: true, description: 'The endpoint’s id.' }) },
    ...costsNothing,
    ...needs('webhooks:manage'),
    resolve: (_root, args, ctx) => getWebhookEndpoint(ctx, String(args.id)),
  }),
);

const inputOf = (input: {
  url?: string | null;
  eventIds?: readonly number[] | null;
  kinds?: readonly (typeof CHANGE_KINDS)[number][] | null;
  description?: string | null;
}): EndpointInput => input;

builder.mutationField('createWebhookEndpoint', (t) =>
  t.field({
    type: CreateWebhookEndpointPayload,
    description:
      'Registers a webhook endpoint for the licensee’s events; answers its signing secret once. Needs `webhooks:manage`.',
    args: { input: t.arg({ type: CreateWebhookEndpointInput, required: true, description: 'The endpoint.' }) },
    ...costs(eventChecks),
    ...needs('webhooks:manage'),
    resolve: (_root, args, ctx) => createWebhookEndpoint(ctx, inputOf(args.input)),
  }),
);

builder.mutationField('updateWebhookEndpoint', (t) =>
  t.field({
    type: WebhookEndpointPayload,
    description: 'Changes a webhook endpoint of the licensee. Needs `webhooks:manage`.',
    args: {
      id: t.arg.id({ required: true, description: 'The endpoint’s id.' }),
      input: t.arg({ type: UpdateWebhookEndpointInput, required: true, description: 'What changes.' }),
    },
    ...costs(eventChecks),
    ...needs('webhooks:manage'),
    resolve: (_root, args, ctx) => updateWebhookEndpoint(ctx, String(args.id), inputOf(args.input)),
  }),
);

builder.mutationField('deleteWebhookEndpoint', (t) =>
  t.field({
    type: DeleteWebhookEndpointPayload,
    description: 'Deletes a webhook endpoint of the licensee and its queued deliveries. Needs `webhooks:manage`.',
    args: { id: t.arg.id({ required: true, description: 'The endpoint’s id.' }) },
    ...costs(managementWrite),
    ...needs('webhooks:manage'),
    resolve: (_root, args, ctx) => deleteWebhookEndpoint(ctx, String(args.id)),
  }),
);

for (const [name, enabled] of [
  ['enableWebhookEndpoint', true],
  ['disableWebhookEndpoint', false],
] as const)
  builder.mutationField(name, (t) =>
    t.field({
      type: WebhookEndpointPayload,
      description: enabled
        ? 'Enables a webhook endpoint: its waiting deliveries go out, and new changes are sent. Needs `webhooks:manage`.'
        : 'Disables a webhook endpoint: nothing is sent to it, its deliveries wait. Needs `webhooks:manage`.',
      args: { id: t.arg.id({ required: true, description: 'The endpoint’s id.' }) },
      ...costs(managementWrite),
      ...needs('webhooks:manage'),
      resolve: (_root, args, ctx) => setWebhookEndpointEnabled(ctx, String(args.id), enabled),
    }),
  );

builder.mutationField('rotateWebhookSecret', (t) =>
  t.field({
    type: RotateWebhookSecretPayload,
    description:
      'Gives a webhook endpoint a new signing secret (answered once); the previous one signs too for ' +
      '`previousSecretValidFor` seconds, so the receiver can switch. Needs `webhooks:manage`.',
    args: {
      id: t.arg.id({ required: true, description: 'The endpoint’s id.' }),
      previousSecretValidFor: t.arg.int({
        defaultValue: 86_400,
        description: 'Seconds the previous secret keeps signing (0 to 604800; 0 stops it at once).',
      }),
    },
    ...costs(managementWrite),
    ...needs('webhooks:manage'),
    resolve: (_root, args, ctx) => rotateWebhookSecret(ctx, String(args.id), args.previousSecretValidFor ?? 86_400),
  }),
);

builder.mutationField('pingWebhookEndpoint', (t) =>
  t.field({
    type: WebhookDeliveryPayload,
    description: 'Sends a signed `webhook.test` to a webhook endpoint of the licensee. Needs `webhooks:manage`.',
    args: { id: t.arg.id({ required: true, description: 'The endpoint’s id.' }) },
    ...costs(managementWrite),
    ...needs('webhooks:manage'),
    resolve: (_root, args, ctx) => pingWebhookEndpoint(ctx, String(args.id)),
  }),
);

builder.mutationField('redeliverWebhook', (t) =>
  t.field({
    type: WebhookDeliveryPayload,
    description:
      'Queues a delivery again, with the same body and `webhook-id` (a failed one, after the receiver is fixed). Needs `webhooks:manage`.',
    args: { deliveryId: t.arg.id({ required: true, description: 'The delivery’s id.' }) },
    ...costs(managementWrite),
    ...needs('webhooks:manage'),
    resolve: (_root, args, ctx) => redeliverWebhook(ctx, String(args.deliveryId)),
  }),
);

/**
 * A recovery reads, in each event it recovers, the pages of what changed since `since`: the events
 * named in `eventIds`, else every event of the endpoint, counted as the most an endpoint may have.
 * Each event's first page is counted; an event with more than a page of changes reads the rest at
 * background priority, behind every interactive call, as a subscription's replay does (changeFeed).
 * One call at least, as every mutation.
 */
const recoverReads: Rule = (_scope, args) => {
  const events = Array.isArray(args.eventIds) ? new Set(args.eventIds).size : MAX_EVENTS_PER_ENDPOINT;
  return { calls: Math.max(1, Math.min(events, MAX_EVENTS_PER_ENDPOINT) * RECOVERED_PAGES_PER_EVENT) };
};
/** The pages of one event's changes a recovery is counted for (recoverReads says why one). */
const RECOVERED_PAGES_PER_EVENT = 1;

const RecoverWebhookEndpointPayload = builder
  .objectRef<EndpointOutcome & { queued?: number }>('RecoverWebhookEndpointPayload')
  .implement({
    description: 'The endpoint recovered, and how many deliveries were queued to it.',
    fields: (t) => ({
      endpoint: t.field({
        type: WebhookEndpoint,
        nullable: true,
        description: 'The endpoint, enabled; null when there are user errors.',
        ...costsNothing,
        resolve: (o) => o.endpoint ?? null,
      }),
      queued: t.int({
        nullable: true,
        description:
          'Deliveries queued: failed ones sent again, and changes it had not had; null when there are user errors.',
        ...costsNothing,
        resolve: (o) => o.queued ?? null,
      }),
      userErrors: t.field({
        type: [UserError],
        description: USER_ERRORS,
        ...costsNothing,
        resolve: (o) => o.userErrors,
      }),
    }),
  });

builder.mutationField('recoverWebhookEndpoint', (t) =>
  t.field({
    type: RecoverWebhookEndpointPayload,
    description:
      'Recovers a webhook endpoint after its receiver was down: enables it, sends again the deliveries ' +
      'that failed since `since` (same body and `webhook-id`), and sends the current state of each ' +
      'reservation of its events modified since `since` that it has not had (changes made while it was ' +
      'disabled). Nothing it received is sent again. Its cost is a page of changes per event it reads: ' +
      'recover an endpoint of many events in parts with `eventIds`. Needs `webhooks:manage`.',
    args: {
      id: t.arg.id({ required: true, description: 'The endpoint’s id.' }),
      since: t.arg({
        type: 'DateTime',
        required: true,
        description:
          'Recover from this instant, on the service’s clock like a `modifiedAt` received (at most 30 days ago): for example when the receiver went down.',
      }),
      eventIds: t.arg.intList({
        description:
          'Only these of its events are read (failed deliveries are sent again whatever their event); all of them when left out.',
      }),
    },
    ...costs(recoverReads),
    ...needs('webhooks:manage'),
    resolve: (_root, args, ctx) =>
      recoverWebhookEndpoint(ctx, { id: String(args.id), since: args.since, eventIds: args.eventIds }),
  }),
);

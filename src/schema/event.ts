import { type GraphQLResolveInfo, getArgumentValues, isObjectType } from 'graphql';
import { recordsOf } from '../connections/paged-source.ts';
import { MAX_WINDOW } from '../connections/window.ts';
import { idNumbers } from '../ids/local-id.ts';
import type { GatewayContext } from '../resolvers/context.ts';
import { listCustomFields } from '../resolvers/custom-field.ts';
import { resolveEventReference } from '../resolvers/entities.ts';
import {
  editReservationLink,
  getEvent,
  groupCodeLink,
  listEvents,
  listGroupCodes,
  listPickup,
  listShoppingViewHotels,
} from '../resolvers/event.ts';
import type { ReservationFilter as ReservationFilterShape } from '../resolvers/filters.ts';
import { listHotels } from '../resolvers/hotel.ts';
import { listAnswers, listQuestions } from '../resolvers/question.ts';
import { scoped } from '../resolvers/request-calls.ts';
import {
  getReservation,
  listReservations,
  type ReservationFlags,
  reservationSource,
} from '../resolvers/reservation.ts';
import type { EventModel } from '../upstream/records.ts';
import { builder } from './builder.ts';
import {
  costs,
  costsNothing,
  eventById,
  eventsByIds,
  listPerEvent,
  oncePerEvent,
  oneCall,
  pagedPerEvent,
} from './cost.ts';
import { ShoppingViewScope } from './enums.ts';
import { internalOnly } from './federation.ts';
import { HotelFilter, hotelOf } from './hotel.ts';
import {
  AttendeeAnswerConnection,
  AttendeeAnswerRef,
  CustomFieldRef,
  EventQuestionRef,
  EventRef,
  GroupCodeRef,
  HotelRef,
  isNode,
  ReservationConnection,
  ReservationRef,
  RoomPickupRef,
  rawDescription,
  ShoppingViewHotelRef,
} from './refs.ts';
import { ReservationFilter } from './reservation.ts';
import { needs } from './scopes.ts';
import { flattenFields, reservationFlags, wantsPartnerview } from './selection.ts';
import { streamsEdges } from './streamed-edges.ts';

/** Event fields its id and its reservations answer: nothing of getevent's record is needed. */
const EVENT_FROM_RESERVATIONS = new Set(['eventId', 'id', '__typename', 'reservations']);

/**
 * `event(eventId)` selecting only its reservations from the first one (`first`, no cursor): the
 * reservation page the connection reads proves the event exists when it holds a record, so no
 * getevent is made. An empty page (no reservations, a filter matching none, or an event the
 * service does not know: its answer for one is not documented) and a failed read ask getevent,
 * so an unknown event is still null and the connection reports its own error.
 */
async function eventOf(ctx: GatewayContext, eventId: number, info: GraphQLResolveInfo): Promise<EventModel | null> {
  const first = firstPageOnly(info);
  if (first) {
    try {
      // The page is the connection's data: a kept copy of it is marked at the connection, as its own read is.
      const atWindow = { ...ctx, calls: ctx.calls.at({ prev: info.path, key: first.responseKey }) };
      const page = await reservationSource(atWindow, eventId, first.filter, first.flags).page(1);
      if (recordsOf(page).length > 0) return { eventId } as EventModel;
    } catch {
      // getevent decides below, and the connection reads (and reports) the page itself.
    }
  }
  return getEvent(scoped(ctx, info), eventId);
}

/** The filter and detail flags of the one reservations window the event's selection holds, when it starts at page 1. */
function firstPageOnly(
  info: GraphQLResolveInfo,
): { responseKey: string; filter: ReservationFilterShape | null | undefined; flags: ReservationFlags } | undefined {
  if (info.fieldNodes.length !== 1) return undefined;
  const fields = flattenFields(info.fieldNodes[0]!.selectionSet, info.fragments);
  if (!fields.every((f) => EVENT_FROM_RESERVATIONS.has(f.name.value))) return undefined;
  const windows = fields.filter((f) => f.name.value === 'reservations');
  if (windows.length !== 1 || streamsEdges({ ...info, fieldNodes: windows })) return undefined;
  // Only a window that reads its records reads page 1 (a count alone reads the page count and the last page).
  if (!flattenFields(windows[0]!.selectionSet, info.fragments).some((f) => f.name.value === 'edges')) return undefined;
  const definition = info.schema.getType('Event');
  const field = isObjectType(definition) ? definition.getFields().reservations : undefined;
  if (!field) return undefined;
  let args: Record<string, unknown>;
  try {
    args = getArgumentValues(field, windows[0]!, info.variableValues);
  } catch {
    return undefined; // the connection reports it
  }
  if (args.after != null || args.last != null || args.before != null) return undefined;
  // A window the connection refuses (or reads nothing of) makes no call before its refusal.
  if (args.first != null && (typeof args.first !== 'number' || args.first < 1 || args.first > MAX_WINDOW))
    return undefined;
  return {
    responseKey: windows[0]!.alias?.value ?? 'reservations',
    filter: args.filter as ReservationFilterShape | null | undefined,
    flags: reservationFlags(info, ['reservations', 'edges', 'node']),
  };
}

builder.asEntity(EventRef, {
  key: builder.selection<{ eventId: number }>('eventId'),
  resolveReference: (ref, ctx) => resolveEventReference(ctx, ref),
});

builder.node(EventRef, {
  description: 'A conference or meeting of the licensee, with its hotels, room blocks and reservations.',
  id: { resolve: (e) => e.eventId, parse: (id) => idNumbers(id, 1)?.[0] ?? null },
  loadOne: (eventId, ctx) => (eventId === null ? null : getEvent(ctx, eventId)),
  isTypeOf: isNode('Event'),
  fields: (t) => ({
    eventId: t.exposeInt('eventId', { description: 'The service’s event identifier.', ...costsNothing }),
    name: t.exposeString('name', { nullable: true, description: 'Name of the event.', ...costsNothing }),
    city: t.exposeString('city', { nullable: true, description: 'City where the event takes place.', ...costsNothing }),
    state: t.exposeString('state', { nullable: true, description: 'State or province.', ...costsNothing }),
    address: t.exposeString('address', {
      nullable: true,
      description: 'Street address of the venue.',
      ...costsNothing,
    }),
    zip: t.exposeString('zip', { nullable: true, description: 'Zip or postal code.', ...costsNothing }),
    startDate: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the event starts.',
      ...costsNothing,
      resolve: (e) => e.startDate ?? null,
    }),
    endDate: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the event ends.',
      ...costsNothing,
      resolve: (e) => e.endDate ?? null,
    }),
    cutOffDate: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'Cut-off: after it the room block is released and hotels leave the shopping view.',
      ...costsNothing,
      resolve: (e) => e.cutOffDate ?? null,
    }),
    groupCodes: t.field({
      type: [GroupCodeRef],
      description: 'All group codes of the event: each opens a sub-block of special inventory.',
      ...costs(listPerEvent),
      resolve: (e, _args, ctx, info) => listGroupCodes(scoped(ctx, info), e.eventId),
    }),
    hotels: t.field({
      type: [HotelRef],
      description:
        'Hotels assigned to the event. All hotel lookups of an event in one operation share one upstream call.',
      args: {
        filter: t.arg({
          type: HotelFilter,
          required: false,
          description: 'Keeps only the hotels matching every given criterion.',
        }),
      },
      ...costs(listPerEvent),
      resolve: (e, args, ctx, info) => listHotels(scoped(ctx, info), e.eventId, wantsPartnerview(info), args.filter),
    }),
    hotel: t.field({
      type: HotelRef,
      nullable: true,
      description: 'One hotel of the event; null when the event has no such hotel.',
      args: { hotelId: t.arg.int({ required: true, description: 'The service’s hotel identifier.' }) },
      ...costs(oncePerEvent),
      resolve: (e, args, ctx, info) => hotelOf(ctx, info, e.eventId, args.hotelId),
    }),
    pickup: t.field({
      type: [RoomPickupRef],
      description: 'Room pickup of the event by hotel, room type and night.',
      ...costs(listPerEvent),
      resolve: (e, _args, ctx, info) => listPickup(scoped(ctx, info), e.eventId),
    }),
    shoppingViewHotels: t.field({
      type: [ShoppingViewHotelRef],
      description:
        'Hotels shown in the shopping view (only those with the Show Hotel Under Shopping View ' +
        'setting). With dates, only hotels with main-block inventory for every night, with their ' +
        'available rooms and rates.',
      args: {
        checkInDate: t.arg({
          type: 'Date',
          required: false,
          description: 'First night of the stay; give checkOutDate with it.',
        }),
        checkOutDate: t.arg({ type: 'Date', required: false, description: 'Day of departure, after checkInDate.' }),
        scope: t.arg({
          type: ShoppingViewScope,
          required: false,
          defaultValue: 'full',
          description: 'How much of each hotel to return.',
        }),
        showPastCutoff: t.arg.boolean({
          required: false,
          defaultValue: false,
          description: 'Also include hotels past their cut-off.',
        }),
      },
      ...costs(listPerEvent),
      resolve: (e, args, ctx, info) => listShoppingViewHotels(scoped(ctx, info), e.eventId, args),
    }),
    reservations: t.connection(
      {
        type: ReservationRef,
        description:
          'Reservations of the event in reservation-number order. A cursor remembers its ' +
          'reservation’s number: a walk resumed after reservations joined or left the filtered list ' +
          'neither skips nor repeats one. `first` is at most 5000, or 100000 with `edges @stream`: ' +
          'the edges then arrive page by page, the first before the last page is read (`pageInfo` ' +
          'and `totalCount` still wait for the whole window: put them in a `@defer` fragment).',
        args: {
          filter: t.arg({
            type: ReservationFilter,
            required: false,
            description: 'Keeps only the reservations matching every given criterion.',
          }),
        },
        ...costs(pagedPerEvent),
        resolve: (e, args, ctx, info) =>
          listReservations(scoped(ctx, info), e.eventId, args.filter, reservationFlags(info, ['edges', 'node']), args, {
            streamed: streamsEdges(info),
          }) as never,
      },
      ReservationConnection,
    ),
    reservation: t.field({
      type: ReservationRef,
      nullable: true,
      description: 'One reservation of the event by its number; null when there is none.',
      args: { reservationNumber: t.arg.int({ required: true, description: 'The reservation number.' }) },
      ...costs(oncePerEvent),
      resolve: (e, args, ctx, info) =>
        getReservation(scoped(ctx, info), e.eventId, args.reservationNumber, reservationFlags(info, [])),
    }),
    questions: t.field({
      type: [EventQuestionRef],
      description: 'Questions asked during reservation: the event’s own, then the licensee’s default questions.',
      ...costs(listPerEvent),
      resolve: (e, _args, ctx, info) => listQuestions(scoped(ctx, info), e.eventId),
    }),
    attendeeAnswers: t.connection(
      {
        type: AttendeeAnswerRef,
        description: 'Answers attendees gave during reservation, by reservation number then question.',
        ...costs(pagedPerEvent),
        resolve: (e, args, ctx, info) => listAnswers(scoped(ctx, info), e.eventId, args) as never,
      },
      AttendeeAnswerConnection,
    ),
    customFields: t.field({
      type: [CustomFieldRef],
      description: 'Custom fields restricted to this event.',
      ...costs(listPerEvent),
      resolve: (e, _args, ctx, info) => listCustomFields(scoped(ctx, info), e.eventId),
    }),
    raw: t.field({
      type: 'JSON',
      description: rawDescription,
      ...internalOnly,
      ...costsNothing,
      resolve: (e) => e.raw,
    }),
  }),
});

builder.queryFields((t) => ({
  event: t.field({
    type: EventRef,
    nullable: true,
    description: 'One event by its id; null when the event does not exist for this licensee.',
    args: { eventId: t.arg.int({ required: true, description: 'The service’s event identifier.' }) },
    ...costs(eventById),
    ...needs('read'),
    resolve: (_root, args, ctx, info) => eventOf(ctx, args.eventId, info),
  }),
  events: t.field({
    type: [EventRef],
    nullable: { list: false, items: true },
    description:
      'Several events, in the order of eventIds, null for unknown ones. The service cannot list ' +
      'events: name the ones you want.',
    args: { eventIds: t.arg.intList({ required: true, description: 'Event identifiers (at most 100).' }) },
    ...costs(eventsByIds),
    ...needs('read'),
    resolve: (_root, args, ctx, info) => listEvents(scoped(ctx, info), args.eventIds),
  }),
  groupCodeLink: t.string({
    nullable: true,
    description:
      'Link to make a reservation for an event with a group code, pre-filled with an attendee’s ' +
      'data; null for an unknown event or group code.',
    args: {
      eventId: t.arg.int({ required: true, description: 'The event.' }),
      groupCode: t.arg.string({
        required: true,
        description: 'The group code whose special inventory the link opens.',
      }),
      attendeeId: t.arg.string({
        required: true,
        description: 'The attendee whose data pre-fills the form (the registration system’s id).',
      }),
      registrationEventId: t.arg.string({
        required: true,
        description: 'The registration system’s event id of that attendee.',
      }),
    },
    ...costs(oneCall),
    ...needs('read'),
    resolve: (_root, args, ctx, info) => groupCodeLink(scoped(ctx, info), args),
  }),
  editReservationLink: t.string({
    nullable: true,
    description: 'Link to edit a reservation; null for an unknown reservation.',
    args: { reservationNumber: t.arg.int({ required: true, description: 'The reservation number.' }) },
    ...costs(oneCall),
    ...needs('read'),
    resolve: (_root, args, ctx, info) => editReservationLink(scoped(ctx, info), args.reservationNumber),
  }),
}));

import { CHANGE_KINDS, type ReservationChange as ChangeModel } from '../changes/change.ts';
import {
  type ReservationChangeFilter as ReservationChangeFilterShape,
  subscribeReservationChanges,
} from '../resolvers/reservation-change.ts';
import { builder } from './builder.ts';
import { changeFeed, costs, costsNothing } from './cost.ts';
import { ReservationStatus, vocabularyEnum } from './enums.ts';
import type { SameShape } from './input-shape.ts';
import { ReservationRef } from './refs.ts';
import { needs } from './scopes.ts';

export const ReservationChangeKind = vocabularyEnum(
  'ReservationChangeKind',
  'What happened to a reservation.',
  CHANGE_KINDS,
  {
    CREATED: 'Made since the subscription began (or since `since`), and not cancelled.',
    CHANGED: 'Changed in any other way (a cancelled reservation changed again is CHANGED).',
    CANCELLED: 'Cancelled since it was last seen (or first seen already cancelled, made and cancelled in between).',
  },
);

const ReservationChange = builder.objectRef<ChangeModel>('ReservationChange').implement({
  description:
    'A reservation as it is after a change. The service keeps no history: two changes to one ' +
    'reservation between two polls arrive as one change, with its latest state.',
  fields: (t) => ({
    kind: t.field({
      type: ReservationChangeKind,
      description: 'What happened.',
      ...costsNothing,
      resolve: (change) => change.kind,
    }),
    modifiedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When it changed, as the service records it (whole minutes).',
      ...costsNothing,
      resolve: (change) => change.modifiedAt,
    }),
    reservation: t.field({
      type: ReservationRef,
      description: 'The reservation in its latest state.',
      ...costsNothing,
      resolve: (change) => change.reservation,
    }),
  }),
});

const ReservationChangeFilter = builder.inputType('ReservationChangeFilter', {
  description: 'Which changes a subscriber receives; all given criteria must match the reservation’s latest state.',
  fields: (t) => ({
    hotelId: t.int({ description: 'Reservations at this hotel.' }),
    groupCode: t.string({ description: 'Code of the sub-block (any case).' }),
    reservationStatus: t.field({ type: ReservationStatus, description: 'Reservations now in this state.' }),
    attendeeId: t.string({ description: 'Reservations linked to this attendee (any case).' }),
  }),
});
true satisfies SameShape<typeof ReservationChangeFilter.$inferInput, ReservationChangeFilterShape>;

builder.subscriptionField('reservationChanged', (t) =>
  t.field({
    type: ReservationChange,
    description:
      'Reservations of the event created, changed or cancelled after `since` (default: when the ' +
      'subscription began), each change once, in modification order (by modification time, then ' +
      'reservation number: the service keeps whole minutes). The gateway polls the service for them ' +
      '(CHANGES_POLL_INTERVAL_MS), once per event however many subscribe. The service keeps no ' +
      'history: two changes to one reservation between two polls arrive as one, with its latest ' +
      'state, and `since` replays the current state of the reservations modified in or after the ' +
      'minute it falls in (so a resume from the last `modifiedAt` received may repeat that minute’s ' +
      'changes), then goes live. An unknown event, or a `since` in the future, is a BAD_USER_INPUT ' +
      'error on the stream.',
    args: {
      eventId: t.arg.int({ required: true, description: 'The event.' }),
      since: t.arg({
        type: 'DateTime',
        description:
          'Replay changes from this instant (for example the last `modifiedAt` received before a ' +
          'disconnect), then go live.',
      }),
      filter: t.arg({ type: ReservationChangeFilter, description: 'Only changes of reservations matching this.' }),
    },
    extensions: {
      ...costs(changeFeed).extensions,
      // `since` replays history for its one subscriber: a subscription given one runs alone, the
      // others of one operation share one execution (operations/shared-subscriptions.ts).
      replayArguments: ['since'],
    },
    ...needs('read'),
    subscribe: (_root, args, ctx) => subscribeReservationChanges(ctx, args),
    // A failure (unknown event, `since` in the future) is the stream's last event: a GraphQL error.
    resolve: (event, _args, ctx) => {
      if ('failure' in event) throw event.failure;
      if (event.modifiedAt) ctx.changeCursor?.at(event.modifiedAt);
      return event;
    },
  }),
);

import { recordActualizedPickup } from '../resolvers/pickup.ts';
import { builder } from './builder.ts';
import { costs, costsNothing, oneWrite } from './cost.ts';
import { needs } from './scopes.ts';

const ActualizedNightInput = builder.inputType('ActualizedNightInput', {
  description: 'Actual rooms picked up on one night.',
  fields: (t) => ({
    date: t.field({ type: 'Date', required: true, description: 'The night.' }),
    rooms: t.int({ required: true, description: 'Rooms actually picked up.' }),
  }),
});

const RecordActualizedPickupInput = builder.inputType('RecordActualizedPickupInput', {
  description: 'Actual pickup of one hotel of an event, by night.',
  fields: (t) => ({
    eventId: t.int({ required: true, description: 'The event.' }),
    hotelId: t.int({ required: true, description: 'The hotel.' }),
    nights: t.field({
      type: [ActualizedNightInput],
      required: true,
      description: 'The nights (1 to 366, each date once).',
    }),
  }),
});

const RecordActualizedPickupPayload = builder.objectRef<{ stored: number }>('RecordActualizedPickupPayload').implement({
  description: 'What was stored.',
  fields: (t) => ({ stored: t.exposeInt('stored', { description: 'Nights stored.', ...costsNothing }) }),
});

builder.mutationField('recordActualizedPickup', (t) =>
  t.field({
    type: RecordActualizedPickupPayload,
    description:
      'Stores actual pickup numbers per hotel and night, which the service compares with its own; a ' +
      'later record for a night replaces the earlier.',
    args: { input: t.arg({ type: RecordActualizedPickupInput, required: true, description: 'The numbers.' }) },
    ...costs(oneWrite),
    ...needs('write'),
    resolve: (_root, args, ctx) => recordActualizedPickup(ctx, args.input),
  }),
);

import { z } from 'zod';
import type { GatewayContext } from './context.ts';
import { asInput, validate } from './validate.ts';

// Dates, room counts, the number of nights and each date once are the endpoint table's rules
// (posteventhotelactualized).
const actualizedSchema = z.object({
  eventId: z.number().int().min(1),
  hotelId: z.number().int().min(1),
  nights: z.array(z.object({ date: z.string(), rooms: z.number() })),
});

/** Stores actual picked-up rooms per night; sent upstream as the JSON array the service asks for. */
export async function recordActualizedPickup(
  ctx: GatewayContext,
  input: { eventId: number; hotelId: number; nights: { date: string; rooms: number }[] },
) {
  const a = validate(actualizedSchema, input, 'input');
  const result = await asInput(
    'input',
    () => ctx.calls.send('posteventhotelactualized', { eventId: a.eventId, hotelId: a.hotelId, actualized: a.nights }),
    {
      actualized: 'nights',
    },
  );
  return { stored: result.stored ?? a.nights.length };
}

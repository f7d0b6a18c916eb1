import { z } from 'zod';
import { parseIsoDate } from '../upstream/formats.ts';
import type { GatewayContext } from './context.ts';
import { converts, validate } from './validate.ts';

const realDate = z.string().refine(converts(parseIsoDate), 'must be a real date like 2027-03-13');

const actualizedSchema = z.object({
  eventId: z.number().int().min(1),
  hotelId: z.number().int().min(1),
  nights: z
    .array(z.object({ date: realDate, rooms: z.number().int().min(0, 'must not be negative').max(100_000) }))
    .min(1, 'must hold at least one night')
    .max(366, 'must hold at most 366 nights')
    .refine((nights) => new Set(nights.map((n) => n.date)).size === nights.length, 'must name each date once'),
});

/** Stores actual picked-up rooms per night; sent upstream as the JSON array the service asks for. */
export async function recordActualizedPickup(ctx: GatewayContext, input: { eventId: number; hotelId: number; nights: { date: string; rooms: number }[] }) {
  const a = validate(actualizedSchema, input, 'input');
  const result = await ctx.loaders.send('posteventhotelactualized', { eventId: a.eventId, hotelId: a.hotelId, actualized: a.nights });
  return { stored: result.stored ?? a.nights.length };
}

import { z } from 'zod';
import { toCountryCode } from '../upstream/formats.ts';
import type { GatewayContext } from './context.ts';
import type { AttendeeModel } from './models.ts';
import { converts, validate } from './validate.ts';

export interface UpsertAttendeeInput {
  attendeeId: string;
  registrationEventId: string;
  updateReservation?: boolean | null;
  email?: string | null;
  ccEmails?: string[] | null;
  salutation?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  companyName?: string | null;
  address?: string | null;
  address2?: string | null;
  city?: string | null;
  state?: string | null;
  zip?: string | null;
  country?: string | null;
  phone?: string | null;
}

const text = z.string().max(255, 'must be at most 255 characters').nullish();
const upsertSchema = z.object({
  attendeeId: z.string().trim().min(1, 'must not be empty').max(255),
  registrationEventId: z.string().trim().min(1, 'must not be empty').max(255),
  updateReservation: z.boolean().nullish(),
  email: z.email('must be an email address').max(255).nullish(),
  ccEmails: z
    .array(z.email('must be an email address'))
    .min(1, 'must hold at least one address')
    .refine((list) => list.join(',').length <= 255, 'must be at most 255 characters together')
    .nullish(),
  salutation: text,
  firstName: text,
  lastName: text,
  companyName: text,
  address: text,
  address2: text,
  city: text,
  state: text,
  zip: text,
  country: z.string().refine(converts(toCountryCode), 'must be a country name, ISO 3166 alpha-2 or alpha-3 code').nullish(),
  phone: text,
});

/** Creates or updates the attendee record that pre-fills the reservation form. */
export async function upsertAttendee(ctx: GatewayContext, input: UpsertAttendeeInput): Promise<{ attendee: AttendeeModel; created: boolean | null }> {
  const a = validate(upsertSchema, input, 'input');
  const { ccEmails, updateReservation, ...rest } = a;
  const params: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) if (value != null) params[key] = value;
  if (ccEmails) params.ccemail = ccEmails;
  if (updateReservation) params.updateReservation = true;
  const result = await ctx.loaders.send('postattendee', params as never);
  return { attendee: { attendeeId: a.attendeeId, registrationEventId: a.registrationEventId }, created: result.created ?? null };
}

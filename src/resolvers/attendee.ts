import { z } from 'zod';
import type { AttendeeModel } from '../upstream/records.ts';
import type { GatewayContext } from './context.ts';
import { tellOwnWrite } from './reservation-change.ts';
import { asInput, validate } from './validate.ts';

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

// Lengths, email forms and country names are the endpoint table's rules (postattendee).
const upsertSchema = z.object({
  attendeeId: z.string().trim().min(1, 'must not be empty'),
  registrationEventId: z.string().trim().min(1, 'must not be empty'),
  updateReservation: z.boolean().nullish(),
  email: z.string().nullish(),
  ccEmails: z.array(z.string()).nullish(),
  salutation: z.string().nullish(),
  firstName: z.string().nullish(),
  lastName: z.string().nullish(),
  companyName: z.string().nullish(),
  address: z.string().nullish(),
  address2: z.string().nullish(),
  city: z.string().nullish(),
  state: z.string().nullish(),
  zip: z.string().nullish(),
  country: z.string().nullish(),
  phone: z.string().nullish(),
});

/** Creates or updates the attendee record that pre-fills the reservation form. */
export async function upsertAttendee(
  ctx: GatewayContext,
  input: UpsertAttendeeInput,
): Promise<{ attendee: AttendeeModel; created: boolean | null }> {
  const a = validate(upsertSchema, input, 'input');
  const { ccEmails, updateReservation, ...rest } = a;
  const params: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) if (value != null) params[key] = value;
  if (ccEmails) params.ccemail = ccEmails;
  if (updateReservation) params.updateReservation = true;
  const result = await asInput('input', () => ctx.calls.send('postattendee', params as never), { ccemail: 'ccEmails' });
  // Pushed to the linked reservations: their subscribers hear of it now.
  if (updateReservation)
    await tellOwnWrite(ctx, { attendeeId: a.attendeeId, registrationEventId: a.registrationEventId });
  return {
    attendee: { attendeeId: a.attendeeId, registrationEventId: a.registrationEventId },
    created: result.created ?? null,
  };
}

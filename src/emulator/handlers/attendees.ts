import { toAlpha2 } from '../countries.ts';
import { invalid, notFound, type ParamSpecs } from '../params.ts';
import { ALL, LINKS, type Route } from '../route.ts';
import { requireEvent } from './events.ts';

const CONTACT_FIELDS = [
  'email',
  'ccemail',
  'salutation',
  'firstName',
  'lastName',
  'companyName',
  'address',
  'address2',
  'city',
  'state',
  'zip',
  'country',
  'phone',
] as const;

/** The attendee's fields that `updateReservation` copies onto its reservations' contact. */
const PUSHED_TO_RESERVATIONS = [
  'firstName',
  'lastName',
  'email',
  'phone',
  'address',
  'address2',
  'city',
  'state',
  'zip',
  'country',
  'companyName',
] as const;

const EMAIL = /^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/;

export const attendeeRoutes: Route[] = [
  {
    name: 'postattendee',
    versions: ALL,
    params: {
      attendeeId: { type: 'string', required: true },
      registrationEventId: { type: 'string', required: true },
      updateReservation: { type: 'bool' },
      ...Object.fromEntries(CONTACT_FIELDS.map((f) => [f, { type: 'string' }])),
    } as ParamSpecs,
    handle(ctx) {
      const p = ctx.params as Record<string, string | boolean | undefined>;
      const fields: Record<string, string> = {};
      for (const name of CONTACT_FIELDS) if (typeof p[name] === 'string') fields[name] = p[name];
      if (fields.email !== undefined && !EMAIL.test(fields.email))
        throw invalid('email', 'email is not an email address');
      if (fields.ccemail !== undefined && !fields.ccemail.split(',').every((e) => EMAIL.test(e.trim()))) {
        throw invalid('ccemail', 'ccemail must be one email address or a comma-separated list of them');
      }
      if (fields.country !== undefined) {
        const alpha2 = toAlpha2(fields.country);
        if (!alpha2)
          throw invalid('country', `country ${fields.country} is not a country name, alpha-2 or alpha-3 code`);
        fields.country = alpha2;
      }
      const licensee = ctx.licensee.systemIdentifier;
      const attendeeId = p.attendeeId as string;
      const registrationEventId = p.registrationEventId as string;
      const now = ctx.clock.now();
      const existing = ctx.store.attendee(licensee, attendeeId, registrationEventId, now);
      ctx.store.putAttendee({
        licensee,
        attendeeId,
        registrationEventId,
        fields: { ...(existing?.fields ?? {}), ...fields },
        updatedMs: now,
      });
      if (existing && p.updateReservation === true) {
        for (const [eventId, list] of ctx.store.reservationsByEvent) {
          if (ctx.store.events.get(eventId)?.licensee !== licensee) continue;
          for (const r of list) {
            if (r.attendeeId !== attendeeId || r.registrationEventId !== registrationEventId) continue;
            const contact = { ...r.contact };
            for (const key of PUSHED_TO_RESERVATIONS) if (fields[key] !== undefined) contact[key] = fields[key];
            // A changed copy in its place: the demo data's records are shared by every store, and frozen.
            ctx.store.replaceReservation({ ...r, contact, modifiedMs: now });
          }
        }
      }
      return { success: true, created: !existing, attendeeId, registrationEventId };
    },
  },
  {
    name: 'getgroupcodelink',
    versions: LINKS,
    params: {
      eventId: { type: 'int', required: true },
      groupCode: { type: 'string', required: true },
      attendeeId: { type: 'string', required: true },
      registrationEventId: { type: 'string', required: true },
    },
    handle(ctx) {
      const event = requireEvent(ctx);
      const p = ctx.params as { groupCode: string; attendeeId: string; registrationEventId: string };
      const code = ctx.store.groupCodesByEvent
        .get(event.eventId)
        ?.find((g) => g.groupCode.toLowerCase() === p.groupCode.toLowerCase());
      if (!code) throw notFound('group code', 'groupCode');
      const query = new URLSearchParams({
        groupCode: code.groupCode,
        attendee: p.attendeeId,
        registrationEvent: p.registrationEventId,
      });
      return { link: `${ctx.baseUrl}/book/${event.eventId}?${query}` };
    },
  },
];

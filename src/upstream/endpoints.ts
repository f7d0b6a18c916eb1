import { z } from 'zod';
import { p, r, unwrapList } from './codecs.ts';
import { LazyList } from './lazy-list.ts';

/**
 * One row per REST endpoint: the versions that serve it (specification, section 9), the version
 * the gateway calls, how the body is encoded, the parameter schema (strict, converts gateway values
 * to wire values), the response schema (lenient), whether a retry is safe, the cache lifetime,
 * and what a successful call files its answer under or drops from the cache.
 * Adding an endpoint is adding a row.
 */

export type Version = 'v1' | 'v101' | 'v102';

/** What the schemas need to know of the licensee the call is made for. */
export interface CodecContext {
  timeZone: string;
}

export interface EndpointDef<P extends z.ZodType = z.ZodType, R extends z.ZodType = z.ZodType> {
  versions: readonly Version[];
  body: 'form' | 'json';
  params: (ctx: CodecContext) => P;
  response: (ctx: CodecContext) => R;
  /** Safe to send again after an ambiguous failure (network error, timeout, 5xx). */
  idempotent: boolean;
  /** How long an answer is kept; 0: not cached (concurrent identical calls still share one request). */
  cacheTtlMs: number;
  /** Cache tags a successful call drops (mutations). */
  invalidates?: (params: z.output<P>) => string[];
}

/** Keeps each row's own parameter and response types. */
function endpoint<P extends z.ZodType, R extends z.ZodType>(def: EndpointDef<P, R>): EndpointDef<P, R> {
  return def;
}

const ALL: readonly Version[] = ['v1', 'v101', 'v102'];
const V101_UP: readonly Version[] = ['v101', 'v102'];
const V102: readonly Version[] = ['v102'];
const LINKS: readonly Version[] = ['v1', 'v101'];

const SHORT = 60_000;

const event = () =>
  r.record({
    eventId: r.id(),
    name: r.text(),
    city: r.text(),
    state: r.text(),
    address: r.text(),
    zip: r.text(),
    startDate: r.isoTimestamp(),
    endDate: r.isoTimestamp(),
    cutOffDate: r.isoTimestamp(),
  });

const hotelShape = {
  hotelId: r.id(),
  name: r.text(),
  address: r.text(),
  city: r.text(),
  state: r.text(),
  zip: r.text(),
  country: r.text(),
  phone: r.text(),
  status: r.text(),
  starRating: r.int(),
  distanceMiles: r.number(),
  partnerHotelId: r.text(),
};

const rate = () => z.looseObject({ date: r.date(), amount: r.number(), currency: r.text() });
const rates = () => r.list(rate()).transform((x) => x ?? []);

const reservation = (zone: string) =>
  r.record({
    reservationNumber: r.id(),
    eventId: r.int(),
    status: r.text(),
    hotelId: r.int(),
    hotelName: r.text(),
    confirmationNumber: r.text(),
    groupCode: r.text(),
    attendeeId: r.text(),
    registrationEventId: r.text(),
    arrivalDate: r.date(),
    departureDate: r.date(),
    createdDate: r.timestamp(zone),
    modifiedDate: r.timestamp(zone),
    label1: r.text(),
    label2: r.text(),
    contact: r.object({
      firstName: r.text(),
      lastName: r.text(),
      email: r.text(),
      phone: r.text(),
      address: r.text(),
      address2: r.text(),
      city: r.text(),
      state: r.text(),
      zip: r.text(),
      country: r.text(),
      companyName: r.text(),
      preferredGuestNumber: r.text(),
    }),
    rooms: r
      .list(
        z.looseObject({
          roomId: r.int(),
          roomTypeId: r.int(),
          roomType: r.text(),
          status: r.text(),
          arrivalDate: r.date(),
          departureDate: r.date(),
          occupancy: r.int(),
          guests: r.list(z.looseObject({ firstName: r.text(), lastName: r.text() })).transform((x) => x ?? []),
          nightlyRates: rates(),
        }),
      )
      .transform((x) => x ?? []),
    event: r.object({ eventId: r.int(), name: r.text() }),
    hotel: r.object(hotelShape),
    subBlock: r.object({ subBlockId: r.int(), groupCode: r.text(), name: r.text() }),
    customFields: r.list(z.looseObject({ customFieldId: r.id(), name: r.text(), value: r.text() })),
    partnerHotelId: r.text(),
  });

const question = () =>
  r.record({
    eventId: r.int(),
    questionId: r.id(),
    question: r.text(),
    type: r.int(),
    options: z.record(z.string(), z.preprocess((v) => (typeof v === 'number' ? String(v) : v), z.string())).nullish().catch(null),
    enabled: r.bool(),
  });

const customField = () => r.record({ customFieldId: r.id(), name: r.text(), eventId: r.int() });

/** `{"pageCount": 3}`, or a bare integer (tolerated variation). */
const pageCount = () =>
  z
    .union([z.looseObject({ pageCount: r.id() }), r.id()])
    .transform((v) => (typeof v === 'number' ? v : v.pageCount));

const list = <T extends z.ZodType>(item: T) =>
  z.unknown().transform((value, ctx) => {
    const parsed = r.list(item).safeParse(value);
    if (!parsed.success || parsed.data === null || parsed.data === undefined) {
      ctx.addIssue({ code: 'custom', message: 'expected a list' });
      return z.NEVER;
    }
    return parsed.data;
  });

/** A page of records decoded only as they are read (see LazyList). */
const lazyList = <T extends z.ZodType>(item: T) =>
  z.unknown().transform((value, ctx) => {
    const items = unwrapList(value);
    if (!Array.isArray(items)) {
      ctx.addIssue({ code: 'custom', message: 'expected a list' });
      return z.NEVER;
    }
    return LazyList.of(items, (x): z.output<T> | null => {
      const parsed = item.safeParse(x);
      return parsed.success ? parsed.data : null;
    });
  });

const ack = () => z.looseObject({ success: r.bool() });

const reservationFilters = (ctx: CodecContext) => ({
  eventId: p.id(),
  reservationNumber: p.id().optional(),
  hotelId: p.id().optional(),
  contactEmail: p.text().optional(),
  contactLastName: p.text().optional(),
  guestLastName: p.text().optional(),
  confirmationNumber: p.text().optional(),
  groupCode: p.text().optional(),
  reservationStatus: z.enum(['new', 'accepted', 'cancelled', 'declined']).optional(),
  roomStatus: z.enum(['active', 'cancelled']).optional(),
  companyName: p.text().optional(),
  label1: p.text().optional(),
  label2: p.text().optional(),
  attendeeId: p.text().optional(),
  modifiedAfterDate: p.upstreamTimestamp(ctx.timeZone).optional(),
});

const eventOnly = () => z.strictObject({ eventId: p.id() });

export const ENDPOINTS = {
  authenticate: endpoint({
    versions: ALL,
    body: 'form',
    params: () => z.strictObject({ key: z.string().min(1), systemIdentifier: z.string().min(1) }),
    response: () => z.looseObject({ token: z.string().min(1) }),
    idempotent: true,
    cacheTtlMs: 0,
  }),
  getevent: endpoint({
    versions: ALL,
    body: 'form',
    params: eventOnly,
    response: event,
    idempotent: true,
    cacheTtlMs: SHORT,
  }),
  getgroupcodes: endpoint({
    versions: ALL,
    body: 'form',
    params: eventOnly,
    response: () =>
      list(
        r.record({
          groupCode: r.textId(),
          name: r.text(),
          hotelId: r.int(),
          subBlockId: r.int(),
          startDate: r.date(),
          endDate: r.date(),
          rooms: r.int(),
        }),
      ),
    idempotent: true,
    cacheTtlMs: SHORT,
  }),
  gethotels: endpoint({
    versions: ALL,
    body: 'form',
    params: () =>
      z.strictObject({
        eventId: p.id(),
        partnerview: p.bool().optional(),
        hotelId: p.id().optional(),
        hotelName: p.text().optional(),
        city: p.text().optional(),
        state: p.text().optional(),
        status: z.enum(['enabled', 'disabled']).optional(),
      }),
    response: () => list(r.record(hotelShape)),
    idempotent: true,
    cacheTtlMs: SHORT,
  }),
  getpickup: endpoint({
    versions: V102,
    body: 'form',
    params: eventOnly,
    response: () =>
      list(
        r.record({
          hotelId: r.int(),
          hotelName: r.text(),
          roomTypeId: r.int(),
          roomType: r.text(),
          date: r.date(),
          block: r.int(),
          pickup: r.int(),
        }),
      ),
    idempotent: true,
    cacheTtlMs: 30_000,
  }),
  posteventhotelactualized: endpoint({
    versions: V102,
    body: 'json',
    params: () =>
      z.strictObject({
        eventId: p.id(),
        hotelId: p.id(),
        actualized: z
          .array(z.strictObject({ date: p.upstreamDate(), rooms: z.number().int().min(0).max(100_000) }))
          .min(1, 'must hold at least one night')
          .max(366, 'must hold at most 366 nights'),
      }),
    response: () => z.looseObject({ success: r.bool(), stored: r.int() }),
    idempotent: true,
    cacheTtlMs: 0,
    invalidates: (q) => [`getpickup|${q.eventId}`],
  }),
  getshoppingviewhotels: endpoint({
    versions: V102,
    body: 'form',
    params: () =>
      z
        .strictObject({
          eventId: p.id(),
          checkInDate: p.isoDate().optional(),
          checkOutDate: p.isoDate().optional(),
          scope: z.enum(['full', 'simple']).optional(),
          showPastCutoff: p.bool().optional(),
        })
        .refine((q) => (q.checkInDate === undefined) === (q.checkOutDate === undefined), {
          message: 'checkInDate and checkOutDate go together',
          path: ['checkOutDate'],
        })
        .refine((q) => q.checkInDate === undefined || q.checkOutDate === undefined || q.checkOutDate > q.checkInDate, {
          message: 'must be after checkInDate',
          path: ['checkOutDate'],
        }),
    response: () =>
      list(
        r.record({
          hotelId: r.id(),
          name: r.text(),
          starRating: r.int(),
          description: r.text(),
          pastCutoff: r.bool(),
          lowestRate: r.object({ amount: r.number(), currency: r.text() }),
          rooms: r.list(z.looseObject({ roomTypeId: r.int(), roomType: r.text(), available: r.int(), rates: rates() })),
        }),
      ),
    idempotent: true,
    cacheTtlMs: 30_000,
  }),
  getreservation: endpoint({
    versions: V101_UP,
    body: 'form',
    params: (ctx) =>
      z.strictObject({
        ...reservationFilters(ctx),
        page: p.page().optional(),
        fullContactInfo: p.bool().optional(),
        detailedEventInfo: p.bool().optional(),
        detailedHotelInfo: p.bool().optional(),
        detailedSubBlockInfo: p.bool().optional(),
        customField: p.bool().optional(),
        partnerview: p.bool().optional(),
      }),
    response: (ctx) => lazyList(reservation(ctx.timeZone)),
    idempotent: true,
    cacheTtlMs: 0,
  }),
  getreservationpagecount: endpoint({
    versions: V101_UP,
    body: 'form',
    params: (ctx) => z.strictObject(reservationFilters(ctx)),
    response: pageCount,
    idempotent: true,
    cacheTtlMs: 0,
  }),
  posteventquestion: endpoint({
    versions: V101_UP,
    body: 'form',
    params: () =>
      z
        .strictObject({
          eventId: p.id(),
          questionId: p.id(),
          question: p.text(1000).min(1),
          type: z.union([z.literal(1), z.literal(2)]),
          options: z
            .record(p.text(255).min(1), p.text(100).min(1))
            .refine((o) => Object.keys(o).length >= 1 && Object.keys(o).length <= 50, 'must hold 1 to 50 options')
            .transform((o) => JSON.stringify(o))
            .optional(),
          enabled: p.bool(),
        })
        .refine((q) => (q.type === 2) === (q.options !== undefined), {
          message: 'options are required for a select box (type 2) and refused otherwise',
          path: ['options'],
        }),
    response: () => z.looseObject({ success: r.bool(), eventId: r.int(), questionId: r.int() }),
    // Posting the same (eventId, questionId) again replaces it: repeating is harmless.
    idempotent: true,
    cacheTtlMs: 0,
    // A default question (eventId 0) shows in every event's list.
    invalidates: (q) => [q.eventId === 0 ? 'geteventquestions' : `geteventquestions|${q.eventId}`],
  }),
  geteventquestions: endpoint({
    versions: V101_UP,
    body: 'form',
    params: eventOnly,
    response: () => list(question()),
    idempotent: true,
    cacheTtlMs: SHORT,
  }),
  getattendeeanswers: endpoint({
    versions: V101_UP,
    body: 'form',
    params: () => z.strictObject({ eventId: p.id(), page: p.page().optional() }),
    response: (ctx) =>
      lazyList(
        r.record({
          reservationNumber: r.int(),
          attendeeId: r.text(),
          registrationEventId: r.text(),
          eventId: r.int(),
          questionId: r.id(),
          question: r.text(),
          answer: r.text(),
          answeredDate: r.timestamp(ctx.timeZone),
        }),
      ),
    idempotent: true,
    cacheTtlMs: 0,
  }),
  getattendeeanswerspagecount: endpoint({
    versions: V101_UP,
    body: 'form',
    params: eventOnly,
    response: pageCount,
    idempotent: true,
    cacheTtlMs: 0,
  }),
  postcustomfield: endpoint({
    versions: V102,
    body: 'form',
    params: () => z.strictObject({ name: p.text().min(1), eventId: p.id().optional() }),
    response: customField,
    // Each call creates a new field: never repeated after an ambiguous failure.
    idempotent: false,
    cacheTtlMs: 0,
    invalidates: () => ['getcustomfields'],
  }),
  getcustomfields: endpoint({
    versions: V102,
    body: 'form',
    params: () => z.strictObject({ eventId: p.id().optional() }),
    response: () => list(customField()),
    idempotent: true,
    cacheTtlMs: SHORT,
  }),
  postcustomfieldvalue: endpoint({
    versions: V102,
    body: 'form',
    params: () =>
      z
        .strictObject({
          customFieldId: p.id(),
          value: p.text(1000),
          reservationId: p.id().optional(),
          attendeeId: p.text().min(1).optional(),
          registrationEventId: p.text().min(1).optional(),
        })
        .refine((q) => (q.reservationId !== undefined) !== (q.attendeeId !== undefined || q.registrationEventId !== undefined), {
          message: 'give either reservationId, or attendeeId and registrationEventId',
          path: ['reservationId'],
        })
        .refine((q) => q.reservationId !== undefined || (q.attendeeId !== undefined && q.registrationEventId !== undefined), {
          message: 'attendeeId and registrationEventId go together',
          path: ['registrationEventId'],
        }),
    response: ack,
    // Posting again replaces the value.
    idempotent: true,
    cacheTtlMs: 0,
  }),
  postattendee: endpoint({
    versions: ALL,
    body: 'form',
    params: () =>
      z.strictObject({
        attendeeId: p.text().min(1),
        registrationEventId: p.text().min(1),
        updateReservation: p.bool().optional(),
        email: z.email().max(255).optional(),
        ccemail: z
          .array(z.email())
          .min(1)
          .transform((list) => list.join(','))
          .refine((s) => s.length <= 255, 'must be at most 255 characters')
          .optional(),
        salutation: p.text().optional(),
        firstName: p.text().optional(),
        lastName: p.text().optional(),
        companyName: p.text().optional(),
        address: p.text().optional(),
        address2: p.text().optional(),
        city: p.text().optional(),
        state: p.text().optional(),
        zip: p.text().optional(),
        country: p.country().optional(),
        phone: p.text().optional(),
      }),
    response: () => z.looseObject({ success: r.bool(), created: r.bool(), attendeeId: r.text(), registrationEventId: r.text() }),
    // Create-or-update by (attendeeId, registrationEventId): repeating is harmless.
    idempotent: true,
    cacheTtlMs: 0,
  }),
  getgroupcodelink: endpoint({
    versions: LINKS,
    body: 'form',
    params: () =>
      z.strictObject({ eventId: p.id(), groupCode: p.text().min(1), attendeeId: p.text().min(1), registrationEventId: p.text().min(1) }),
    response: () => z.looseObject({ link: z.string().min(1) }),
    idempotent: true,
    cacheTtlMs: 0,
  }),
  geteditreservationlink: endpoint({
    versions: LINKS,
    body: 'form',
    params: () => z.strictObject({ reservationNumber: p.id() }),
    response: () => z.looseObject({ link: z.string().min(1) }),
    idempotent: true,
    cacheTtlMs: 0,
  }),
};

export type EndpointName = keyof typeof ENDPOINTS;
export type ParamsOf<N extends EndpointName> = z.input<ReturnType<(typeof ENDPOINTS)[N]['params']>>;
export type ResultOf<N extends EndpointName> = z.output<ReturnType<(typeof ENDPOINTS)[N]['response']>>;

/** v102 where it serves the endpoint, else the newest version that does (v101 for the links). */
export function versionOf(name: EndpointName): Version {
  const versions: readonly Version[] = ENDPOINTS[name].versions;
  return versions.includes('v102') ? 'v102' : versions.includes('v101') ? 'v101' : 'v1';
}

import { z } from 'zod';
import { fastCodecOf, fromService, toService, unwrapList } from './codecs.ts';
import { nightsBetween } from './formats.ts';
import { LazyList } from './lazy-list.ts';
import { viewOf } from './record-view.ts';
import { hotelStatus, questionType, reservationStatus, roomStatus, shoppingViewScope } from './vocabulary.ts';

/**
 * One row per REST endpoint: the versions that serve it (docs/architecture.md, "Endpoint table and
 * versions"), the version the gateway calls, how the body is encoded, the parameter schema (strict,
 * converts gateway values to wire values), the response schema (lenient), whether a retry is safe,
 * the cache lifetime, and what a successful call files its answer under or drops from the cache.
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
  /**
   * A page of a paged list or its page count: kept for the client's page lifetime
   * (UPSTREAM_PAGE_TTL_MS, seconds) instead of cacheTtlMs, so that many operations reading the same
   * pages of one list at once cost what one does; our own writes drop them.
   */
  pagedList?: true;
  /**
   * Cache tags a successful call drops. Every write has it, even one that drops nothing: it is also
   * what marks the endpoint a write, which the budget serves before any read (`isWrite`).
   */
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

/** The longest stay the shopping view is asked about (longer ones ran 80 s upstream). */
const MAX_STAY_NIGHTS = 366;

/** Each date once: with two counts for one night, which the service keeps is nobody's guess. */
function eachDateOnce(nights: readonly { date: string }[], ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  nights.forEach(({ date }, index) => {
    if (seen.has(date)) ctx.addIssue({ code: 'custom', path: [index, 'date'], message: 'names a date already given' });
    seen.add(date);
  });
}

const event = () =>
  fromService.record({
    eventId: fromService.id(),
    name: fromService.text(),
    city: fromService.text(),
    state: fromService.text(),
    address: fromService.text(),
    zip: fromService.text(),
    startDate: fromService.isoTimestamp(),
    endDate: fromService.isoTimestamp(),
    cutOffDate: fromService.isoTimestamp(),
  });

const hotelShape = {
  hotelId: fromService.id(),
  name: fromService.text(),
  address: fromService.text(),
  city: fromService.text(),
  state: fromService.text(),
  zip: fromService.text(),
  country: fromService.text(),
  phone: fromService.text(),
  status: fromService.text(),
  starRating: fromService.int(),
  distanceMiles: fromService.number(),
  partnerHotelId: fromService.text(),
};

const rate = () =>
  z.looseObject({ date: fromService.date(), amount: fromService.number(), currency: fromService.text() });
const rates = () => fromService.items(rate());

const reservation = (zone: string) =>
  fromService.record({
    reservationNumber: fromService.id(),
    eventId: fromService.int(),
    status: fromService.text(),
    hotelId: fromService.int(),
    hotelName: fromService.text(),
    confirmationNumber: fromService.text(),
    groupCode: fromService.text(),
    attendeeId: fromService.text(),
    registrationEventId: fromService.text(),
    arrivalDate: fromService.date(),
    departureDate: fromService.date(),
    createdDate: fromService.timestamp(zone),
    modifiedDate: fromService.timestamp(zone),
    label1: fromService.text(),
    label2: fromService.text(),
    contact: fromService.object({
      firstName: fromService.text(),
      lastName: fromService.text(),
      email: fromService.text(),
      phone: fromService.text(),
      address: fromService.text(),
      address2: fromService.text(),
      city: fromService.text(),
      state: fromService.text(),
      zip: fromService.text(),
      country: fromService.text(),
      companyName: fromService.text(),
      preferredGuestNumber: fromService.text(),
    }),
    rooms: fromService.items(
      z.looseObject({
        roomId: fromService.int(),
        roomTypeId: fromService.int(),
        roomType: fromService.text(),
        status: fromService.text(),
        arrivalDate: fromService.date(),
        departureDate: fromService.date(),
        occupancy: fromService.int(),
        guests: fromService.items(z.looseObject({ firstName: fromService.text(), lastName: fromService.text() })),
        nightlyRates: rates(),
      }),
    ),
    event: fromService.object({ eventId: fromService.int(), name: fromService.text() }),
    hotel: fromService.object(hotelShape),
    subBlock: fromService.object({
      subBlockId: fromService.int(),
      groupCode: fromService.text(),
      name: fromService.text(),
    }),
    customFields: fromService.list(
      z.looseObject({ customFieldId: fromService.id(), name: fromService.text(), value: fromService.text() }),
    ),
    partnerHotelId: fromService.text(),
  });

const question = () =>
  fromService.record({
    eventId: fromService.int(),
    questionId: fromService.id(),
    question: fromService.text(),
    type: fromService.int(),
    options: z
      .record(
        z.string(),
        z.preprocess((v) => (typeof v === 'number' ? String(v) : v), z.string()),
      )
      .nullish()
      .catch(null),
    enabled: fromService.bool(),
  });

const customField = () =>
  fromService.record({ customFieldId: fromService.id(), name: fromService.text(), eventId: fromService.int() });

/** `{"pageCount": 3}`, or a bare integer (tolerated variation). */
const pageCount = () =>
  z
    .union([z.looseObject({ pageCount: fromService.id() }), fromService.id()])
    .transform((v) => (typeof v === 'number' ? v : v.pageCount));

const list = <T extends z.ZodType>(item: T) =>
  z.unknown().transform((value, ctx) => {
    const parsed = fromService.list(item).safeParse(value);
    if (!parsed.success || parsed.data === null || parsed.data === undefined) {
      ctx.addIssue({ code: 'custom', message: 'expected a list' });
      return z.NEVER;
    }
    return parsed.data;
  });

/**
 * A page of records read where they lie (record-view.ts): each record's identifiers checked when it
 * is first reached (see LazyList), every other field converted when read.
 */
const lazyList = <T extends z.ZodType>(item: T) => {
  const codec = fastCodecOf(item);
  const decode =
    codec?.kind === 'record'
      ? (viewOf(codec.shape) as (x: unknown) => z.output<T> | null)
      : (x: unknown): z.output<T> | null => {
          const parsed = item.safeParse(x);
          return parsed.success ? parsed.data : null;
        };
  return z.unknown().transform((value, ctx) => {
    const items = unwrapList(value);
    if (!Array.isArray(items)) {
      ctx.addIssue({ code: 'custom', message: 'expected a list' });
      return z.NEVER;
    }
    return LazyList.of(items, decode);
  });
};

const ack = () => z.looseObject({ success: fromService.bool() });

const reservationFilters = (ctx: CodecContext) => ({
  eventId: toService.id(),
  reservationNumber: toService.id().optional(),
  hotelId: toService.id().optional(),
  contactEmail: toService.text().optional(),
  contactLastName: toService.text().optional(),
  guestLastName: toService.text().optional(),
  confirmationNumber: toService.text().optional(),
  groupCode: toService.text().optional(),
  reservationStatus: reservationStatus.optional(),
  roomStatus: roomStatus.optional(),
  companyName: toService.text().optional(),
  label1: toService.text().optional(),
  label2: toService.text().optional(),
  attendeeId: toService.text().optional(),
  modifiedAfterDate: toService.upstreamTimestamp(ctx.timeZone).optional(),
});

const eventOnly = () => z.strictObject({ eventId: toService.id() });

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
        fromService.record({
          groupCode: fromService.textId(),
          name: fromService.text(),
          hotelId: fromService.int(),
          subBlockId: fromService.int(),
          startDate: fromService.date(),
          endDate: fromService.date(),
          rooms: fromService.int(),
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
        eventId: toService.id(),
        partnerview: toService.bool().optional(),
        hotelId: toService.id().optional(),
        hotelName: toService.text().optional(),
        city: toService.text().optional(),
        state: toService.text().optional(),
        status: hotelStatus.optional(),
      }),
    response: () => list(fromService.record(hotelShape)),
    idempotent: true,
    cacheTtlMs: SHORT,
  }),
  getpickup: endpoint({
    versions: V102,
    body: 'form',
    params: eventOnly,
    response: () =>
      list(
        fromService.record({
          hotelId: fromService.int(),
          hotelName: fromService.text(),
          roomTypeId: fromService.int(),
          roomType: fromService.text(),
          date: fromService.date(),
          block: fromService.int(),
          pickup: fromService.int(),
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
        eventId: toService.id(),
        hotelId: toService.id(),
        actualized: z
          .array(
            z.strictObject({
              date: toService.upstreamDate(),
              rooms: z.number().int().min(0, 'must not be negative').max(100_000, 'must be at most 100000'),
            }),
          )
          .min(1, 'must hold at least one night')
          .max(366, 'must hold at most 366 nights')
          .superRefine(eachDateOnce),
      }),
    response: () => z.looseObject({ success: fromService.bool(), stored: fromService.int() }),
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
          eventId: toService.id(),
          checkInDate: toService.isoDate().optional(),
          checkOutDate: toService.isoDate().optional(),
          scope: shoppingViewScope.optional(),
          showPastCutoff: toService.bool().optional(),
        })
        .refine((q) => (q.checkInDate === undefined) === (q.checkOutDate === undefined), {
          message: 'checkInDate and checkOutDate go together',
          path: ['checkOutDate'],
        })
        .refine((q) => q.checkInDate === undefined || q.checkOutDate === undefined || q.checkOutDate > q.checkInDate, {
          message: 'must be after checkInDate',
          path: ['checkOutDate'],
        })
        .refine(
          (q) =>
            q.checkInDate === undefined ||
            q.checkOutDate === undefined ||
            nightsBetween(q.checkInDate, q.checkOutDate) <= MAX_STAY_NIGHTS,
          {
            message: `must be at most ${MAX_STAY_NIGHTS} nights after checkInDate`,
            path: ['checkOutDate'],
          },
        ),
    response: () =>
      list(
        fromService.record({
          hotelId: fromService.id(),
          name: fromService.text(),
          starRating: fromService.int(),
          description: fromService.text(),
          pastCutoff: fromService.bool(),
          lowestRate: fromService.object({ amount: fromService.number(), currency: fromService.text() }),
          rooms: fromService.list(
            z.looseObject({
              roomTypeId: fromService.int(),
              roomType: fromService.text(),
              available: fromService.int(),
              rates: rates(),
            }),
          ),
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
        page: toService.page().optional(),
        fullContactInfo: toService.bool().optional(),
        detailedEventInfo: toService.bool().optional(),
        detailedHotelInfo: toService.bool().optional(),
        detailedSubBlockInfo: toService.bool().optional(),
        customField: toService.bool().optional(),
        partnerview: toService.bool().optional(),
      }),
    response: (ctx) => lazyList(reservation(ctx.timeZone)),
    idempotent: true,
    cacheTtlMs: 0,
    pagedList: true,
  }),
  getreservationpagecount: endpoint({
    versions: V101_UP,
    body: 'form',
    params: (ctx) => z.strictObject(reservationFilters(ctx)),
    response: pageCount,
    idempotent: true,
    cacheTtlMs: 0,
    pagedList: true,
  }),
  posteventquestion: endpoint({
    versions: V101_UP,
    body: 'form',
    params: () =>
      z
        .strictObject({
          eventId: toService.id(),
          questionId: toService.id(),
          question: toService.text(1000).min(1),
          type: questionType,
          // A list here, so that a refusal names the option by its place; sent as a value → label object.
          // (A record's keys went unchecked: zod 4 let a 256-character value through.)
          options: z
            .array(
              z.strictObject({
                value: toService.text(255).min(1, 'must not be empty'),
                label: toService.text(100).min(1, 'must not be empty'),
              }),
            )
            .min(1, 'must hold at least one option')
            .max(50, 'must hold at most 50 options')
            .refine((list) => new Set(list.map((o) => o.value)).size === list.length, 'option values must be distinct')
            .transform((list) => JSON.stringify(Object.fromEntries(list.map((o) => [o.value, o.label]))))
            .optional(),
          enabled: toService.bool(),
        })
        .refine((q) => (q.type === 2) === (q.options !== undefined), {
          message: 'options are required for a select box (type 2) and refused otherwise',
          path: ['options'],
        }),
    response: () =>
      z.looseObject({ success: fromService.bool(), eventId: fromService.int(), questionId: fromService.int() }),
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
    params: () => z.strictObject({ eventId: toService.id(), page: toService.page().optional() }),
    response: (ctx) =>
      lazyList(
        fromService.record({
          reservationNumber: fromService.int(),
          attendeeId: fromService.text(),
          registrationEventId: fromService.text(),
          eventId: fromService.int(),
          questionId: fromService.id(),
          question: fromService.text(),
          answer: fromService.text(),
          answeredDate: fromService.timestamp(ctx.timeZone),
        }),
      ),
    idempotent: true,
    cacheTtlMs: 0,
    pagedList: true,
  }),
  getattendeeanswerspagecount: endpoint({
    versions: V101_UP,
    body: 'form',
    params: eventOnly,
    response: pageCount,
    idempotent: true,
    cacheTtlMs: 0,
    pagedList: true,
  }),
  postcustomfield: endpoint({
    versions: V102,
    body: 'form',
    params: () => z.strictObject({ name: toService.text().min(1), eventId: toService.id().optional() }),
    response: customField,
    // Each call creates a new field: never repeated after an ambiguous failure.
    idempotent: false,
    cacheTtlMs: 0,
    invalidates: () => ['getcustomfields'],
  }),
  getcustomfields: endpoint({
    versions: V102,
    body: 'form',
    params: () => z.strictObject({ eventId: toService.id().optional() }),
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
          customFieldId: toService.id(),
          value: toService.text(1000),
          reservationId: toService.id().optional(),
          attendeeId: toService.text().min(1).optional(),
          registrationEventId: toService.text().min(1).optional(),
        })
        .refine(
          (q) =>
            (q.reservationId !== undefined) !== (q.attendeeId !== undefined || q.registrationEventId !== undefined),
          {
            message: 'give either reservationId, or attendeeId and registrationEventId',
            path: ['reservationId'],
          },
        )
        .refine(
          (q) => q.reservationId !== undefined || (q.attendeeId !== undefined && q.registrationEventId !== undefined),
          {
            message: 'attendeeId and registrationEventId go together',
            path: ['registrationEventId'],
          },
        ),
    response: ack,
    // Posting again replaces the value.
    idempotent: true,
    cacheTtlMs: 0,
    // Custom field values are part of reservation records (customField=true), an attendee's values
    // on each of the attendee's reservations.
    invalidates: () => ['getreservation'],
  }),
  postattendee: endpoint({
    versions: ALL,
    body: 'form',
    params: () =>
      z.strictObject({
        attendeeId: toService.text().min(1),
        registrationEventId: toService.text().min(1),
        updateReservation: toService.bool().optional(),
        email: z.email().max(255).optional(),
        ccemail: z
          .array(z.email())
          .min(1)
          .transform((list) => list.join(','))
          .refine((s) => s.length <= 255, 'must be at most 255 characters')
          .optional(),
        salutation: toService.text().optional(),
        firstName: toService.text().optional(),
        lastName: toService.text().optional(),
        companyName: toService.text().optional(),
        address: toService.text().optional(),
        address2: toService.text().optional(),
        city: toService.text().optional(),
        state: toService.text().optional(),
        zip: toService.text().optional(),
        country: toService.country().optional(),
        phone: toService.text().optional(),
      }),
    response: () =>
      z.looseObject({
        success: fromService.bool(),
        created: fromService.bool(),
        attendeeId: fromService.text(),
        registrationEventId: fromService.text(),
      }),
    // Create-or-update by (attendeeId, registrationEventId): repeating is harmless.
    idempotent: true,
    cacheTtlMs: 0,
    // With updateReservation the attendee's reservations take the new contact details.
    invalidates: (q) => (q.updateReservation ? ['getreservation'] : []),
  }),
  getgroupcodelink: endpoint({
    versions: LINKS,
    body: 'form',
    params: () =>
      z.strictObject({
        eventId: toService.id(),
        groupCode: toService.text().min(1),
        attendeeId: toService.text().min(1),
        registrationEventId: toService.text().min(1),
      }),
    response: () => z.looseObject({ link: z.string().min(1) }),
    idempotent: true,
    cacheTtlMs: 0,
  }),
  geteditreservationlink: endpoint({
    versions: LINKS,
    body: 'form',
    params: () => z.strictObject({ reservationNumber: toService.id() }),
    response: () => z.looseObject({ link: z.string().min(1) }),
    idempotent: true,
    cacheTtlMs: 0,
  }),
};

export type EndpointName = keyof typeof ENDPOINTS;
export type ParamsOf<N extends EndpointName> = z.input<ReturnType<(typeof ENDPOINTS)[N]['params']>>;
export type ResultOf<N extends EndpointName> = z.output<ReturnType<(typeof ENDPOINTS)[N]['response']>>;

/** Any row of the table, its own parameter and response types forgotten (the call path's view). */
export type AnyEndpoint = EndpointDef<z.ZodType, z.ZodType>;

/** A call of the endpoint changes something upstream (a mutation's): one with `invalidates`. */
export function isWrite(endpoint: AnyEndpoint): boolean {
  return endpoint.invalidates !== undefined;
}

const schemaMemo = new Map<string, { params: z.ZodType; response: z.ZodType }>();

/** The row's parameter and response schemas for a licensee's context, built once per endpoint and zone. */
export function schemasOf(name: EndpointName, ctx: CodecContext): { params: z.ZodType; response: z.ZodType } {
  const key = `${name}|${ctx.timeZone}`;
  let schemas = schemaMemo.get(key);
  if (!schemas) {
    const endpoint = ENDPOINTS[name] as unknown as AnyEndpoint;
    schemaMemo.set(key, (schemas = { params: endpoint.params(ctx), response: endpoint.response(ctx) }));
  }
  return schemas;
}

/** v102 where it serves the endpoint, else the newest version that does (v101 for the links). */
export function versionOf(name: EndpointName): Version {
  const versions: readonly Version[] = ENDPOINTS[name].versions;
  return versions.includes('v102') ? 'v102' : versions.includes('v101') ? 'v101' : 'v1';
}

/**
 * `getreservation`'s detail flags (its parameters above): each adds a group of fields to every
 * record (docs/upstream.md), so a page read with other flags holds another form of the same records.
 */
export const RESERVATION_DETAIL_FLAGS = [
  'fullContactInfo',
  'detailedEventInfo',
  'detailedHotelInfo',
  'detailedSubBlockInfo',
  'customField',
  'partnerview',
] as const satisfies readonly (keyof ParamsOf<'getreservation'>)[];

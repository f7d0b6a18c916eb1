import { faker } from '@faker-js/faker/locale/en';
import { DAY, dayOf } from './dates.ts';
import {
  type AnswerRecord,
  type AttendeeRecord,
  type Contact,
  type DemoData,
  type EventRecord,
  type GroupCodeRecord,
  type HotelRecord,
  holdsRooms,
  type Licensee,
  type QuestionRecord,
  type ReservationRecord,
  type ReservationStatus,
  type RoomRecord,
  type RoomTypeRecord,
} from './model.ts';

/**
 * The demo data (docs/emulator.md): licensees, credentials and event ids are fixed there;
 * every date is fixed relative to the clock's start; everything else is drawn from the seed, so
 * one seed gives the same data byte for byte.
 */

interface EventPlan {
  eventId: number;
  licensee: string;
  zone: string;
  /** Start of the event, days from the clock's start. */
  startInDays: number;
  days: number;
  /** Cut-off, days from the clock's start. */
  cutOffInDays: number;
  hotels: number;
  reservations: number;
  firstReservationNumber: number;
}

export const DEMO_LICENSEES: Licensee[] = [
  { systemIdentifier: '1001', key: 'demo-key-1001', timeZone: 'UTC' },
  { systemIdentifier: '2002', key: 'demo-key-2002', timeZone: 'America/New_York' },
];

// 5002 holds exactly 1000 reservations and 5003 exactly 1001: the two page-boundary cases.
const PLANS: EventPlan[] = [
  {
    eventId: 5001,
    licensee: '1001',
    zone: 'America/Chicago',
    startInDays: 56,
    days: 4,
    cutOffInDays: 28,
    hotels: 14,
    reservations: 25_600,
    firstReservationNumber: 700_001,
  },
  {
    eventId: 5002,
    licensee: '1001',
    zone: 'America/Los_Angeles',
    startInDays: 30,
    days: 3,
    cutOffInDays: -5,
    hotels: 4,
    reservations: 1000,
    firstReservationNumber: 760_001,
  },
  {
    eventId: 5003,
    licensee: '1001',
    zone: 'Europe/London',
    startInDays: -60,
    days: 2,
    cutOffInDays: -90,
    hotels: 3,
    reservations: 1001,
    firstReservationNumber: 770_001,
  },
  {
    eventId: 6001,
    licensee: '2002',
    zone: 'America/New_York',
    startInDays: 90,
    days: 3,
    cutOffInDays: 60,
    hotels: 5,
    reservations: 400,
    firstReservationNumber: 900_001,
  },
  {
    eventId: 6002,
    licensee: '2002',
    zone: 'America/New_York',
    startInDays: -200,
    days: 2,
    cutOffInDays: -230,
    hotels: 2,
    reservations: 120,
    firstReservationNumber: 910_001,
  },
];

const ROOM_TYPES = ['King', 'Double Queen', 'Suite', 'Accessible King', 'Studio'];
const LABEL1 = ['Speaker', 'Exhibitor', 'Staff', 'VIP', 'Attendee'];
const HOTEL_WORDS = ['Grand', 'Plaza', 'Suites', 'Inn', 'Resort', 'Tower', 'Lodge', 'Marriott', 'Hyatt', 'Hilton'];

export function generateDemoData(seed: number, startMs: number): DemoData {
  // English only: @faker-js/faker's index loads its 60 locales (2 MB of the image, more of the
  // heap). The generation is synchronous, so seeding the shared instance makes this call's draws.
  const f = faker;
  f.seed(seed);
  const pick = <T>(items: readonly T[]): T => items[f.number.int({ min: 0, max: items.length - 1 })]!;
  const chance = (p: number) => f.number.float({ min: 0, max: 1 }) < p;

  const events: EventRecord[] = [];
  const hotels: HotelRecord[] = [];
  const groupCodes: GroupCodeRecord[] = [];
  const blocks: Record<string, number> = {};
  const reservations: ReservationRecord[] = [];
  const questions: QuestionRecord[] = [];
  const answers: AnswerRecord[] = [];
  const customFieldValues: DemoData['customFieldValues'] = [];
  const attendees = new Map<string, AttendeeRecord>();

  // Name pools drawn once: picking from them is much faster than asking faker per record.
  const firstNames = Array.from({ length: 400 }, () => f.person.firstName());
  const lastNames = Array.from({ length: 600 }, () => f.person.lastName());
  const companies = Array.from({ length: 150 }, () => f.company.name());
  const streets = Array.from({ length: 300 }, () => f.location.streetAddress());
  const cities = Array.from({ length: 80 }, () => ({
    city: f.location.city(),
    state: f.location.state({ abbreviated: true }),
    zip: f.location.zipCode('#####'),
  }));

  let nextHotelId = 201;
  let nextRoomTypeId = 31;
  let nextSubBlockId = 9001;
  let nextRoomId = 1;

  for (const licensee of DEMO_LICENSEES) {
    questions.push(
      {
        licensee: licensee.systemIdentifier,
        eventId: 0,
        questionId: 1,
        question: 'Need parking?',
        type: 2,
        options: [
          ['1', 'Yes'],
          ['0', 'No'],
        ],
        enabled: true,
      },
      {
        licensee: licensee.systemIdentifier,
        eventId: 0,
        questionId: 2,
        question: 'Any accessibility needs we should know about?',
        type: 1,
        options: null,
        enabled: true,
      },
    );
  }

  for (const plan of PLANS) {
    const place = pick(cities);
    const startMs0 = startMs + plan.startInDays * DAY;
    // Events start at 08:00 local time on their first day.
    const startDayMs = Math.floor(startMs0 / DAY) * DAY;
    const event: EventRecord = {
      eventId: plan.eventId,
      licensee: plan.licensee,
      name: `${f.company.buzzNoun().replace(/^./, (c) => c.toUpperCase())} ${pick(['Summit', 'Congress', 'Expo', 'Forum', 'Annual Meeting'])} ${new Date(startMs0).getUTCFullYear()}`,
      city: place.city,
      state: place.state,
      address: pick(streets),
      zip: place.zip,
      zone: plan.zone,
      startMs: startDayMs + 14 * 3_600_000,
      endMs: startDayMs + (plan.days - 1) * DAY + 23 * 3_600_000,
      cutOffMs: startDayMs + (plan.cutOffInDays - plan.startInDays) * DAY + 5 * 3_600_000,
    };
    events.push(event);
    const eventStartDay = dayOf(event.startMs);
    const firstNight = eventStartDay - 2;
    const lastNight = eventStartDay + plan.days; // exclusive

    const eventHotels: HotelRecord[] = [];
    for (let h = 0; h < plan.hotels; h++) {
      const hotelId = nextHotelId++;
      const roomTypes: RoomTypeRecord[] = ROOM_TYPES.slice(0, 2 + (h % 3)).map((roomType) => ({
        roomTypeId: nextRoomTypeId++,
        roomType,
        baseRate: 129 + f.number.int({ min: 0, max: 20 }) * 10,
        currency: 'USD',
      }));
      const hotelPlace = chance(0.8) ? { city: event.city, state: event.state, zip: event.zip } : pick(cities);
      const name = `${f.location.street()} ${pick(HOTEL_WORDS)}`;
      const hotel: HotelRecord = {
        hotelId,
        eventId: plan.eventId,
        name,
        address: pick(streets),
        city: hotelPlace.city,
        state: hotelPlace.state,
        zip: hotelPlace.zip,
        country: 'US',
        phone: f.phone.number({ style: 'national' }),
        // Every sixth hotel is disabled for the event.
        status: h % 6 === 5 ? 'disabled' : 'enabled',
        starRating: f.number.int({ min: 2, max: 5 }),
        distanceMiles: f.number.float({ min: 0.1, max: 9, fractionDigits: 1 }),
        partnerHotelId: `PX-${hotelId}`,
        shoppingView: h % 4 !== 3,
        description: f.lorem.sentence(),
        // Two hotels of an event close earlier than the event itself.
        cutOffMs: h === 1 || h === 2 ? Math.min(event.cutOffMs, startMs - 10 * DAY) : event.cutOffMs,
        roomTypes,
      };
      eventHotels.push(hotel);
      hotels.push(hotel);
      for (let g = 0; g < (plan.hotels > 5 ? 1 : 1) + (h % 2); g++) {
        const code = `${f.string.alpha({ length: 4, casing: 'upper' })}${String(new Date(event.startMs).getUTCFullYear()).slice(2)}`;
        groupCodes.push({
          eventId: plan.eventId,
          groupCode: code,
          name: `${pick(companies)} delegation`,
          hotelId,
          subBlockId: nextSubBlockId++,
          startDay: firstNight,
          endDay: lastNight,
          rooms: f.number.int({ min: 10, max: 60 }),
        });
      }
    }
    const eventCodes = groupCodes.filter((g) => g.eventId === plan.eventId);

    const eventQuestions: Omit<QuestionRecord, 'licensee' | 'eventId' | 'enabled'>[] & { enabled?: boolean }[] = [
      {
        questionId: 7,
        question: 'Will you join the welcome reception?',
        type: 2 as const,
        options: [
          ['1', 'Yes'],
          ['0', 'No'],
          ['2', 'Maybe'],
        ],
      },
      { questionId: 8, question: 'Dietary requirements', type: 1 as const, options: null },
      {
        questionId: 9,
        question: 'Shuttle from the airport?',
        type: 2 as const,
        options: [
          ['1', 'Yes'],
          ['0', 'No'],
        ],
        enabled: false,
      },
    ];
    for (const q of eventQuestions) {
      questions.push({ licensee: plan.licensee, eventId: plan.eventId, enabled: true, ...q });
    }

    const pickup = new Map<string, number>();
    const attendeePool = Math.max(1, Math.floor(plan.reservations * 0.7));
    const registrationEventId = `REG-${plan.eventId - 4900}`;
    const windowStart = Math.min(startMs, event.startMs) - 150 * DAY;
    const windowEnd = Math.min(startMs, event.startMs) - 3_600_000;
    let reservationNumber = plan.firstReservationNumber;
    for (let r = 0; r < plan.reservations; r++) {
      const hotel = pick(eventHotels);
      const statusDraw = f.number.float({ min: 0, max: 1 });
      const status: ReservationStatus =
        statusDraw < 0.7 ? 'accepted' : statusDraw < 0.85 ? 'new' : statusDraw < 0.95 ? 'cancelled' : 'declined';
      const arrivalDay = firstNight + f.number.int({ min: 0, max: 2 });
      const departureDay = Math.min(lastNight, arrivalDay + f.number.int({ min: 1, max: 4 }));
      const firstName = pick(firstNames);
      const lastName = pick(lastNames);
      const company = pick(companies);
      const place2 = pick(cities);
      const codes = eventCodes.filter((g) => g.hotelId === hotel.hotelId);
      const code = codes.length > 0 && chance(0.3) ? pick(codes) : null;
      const linked = chance(0.6);
      const createdMs = windowStart + f.number.int({ min: 0, max: windowEnd - windowStart - DAY });
      const modifiedMs = chance(0.5)
        ? createdMs
        : Math.min(windowEnd, createdMs + f.number.int({ min: 60_000, max: 40 * DAY }));
      const contact: Contact = {
        firstName,
        lastName,
        email:
          `${firstName}.${lastName}${r % 97}@${company.split(/[^A-Za-z]/)[0]!.toLowerCase() || 'example'}.example.com`.toLowerCase(),
        phone: f.phone.number({ style: 'national' }),
        address: pick(streets),
        address2: chance(0.2) ? `Suite ${f.number.int({ min: 100, max: 999 })}` : '',
        city: place2.city,
        state: place2.state,
        zip: place2.zip,
        country: chance(0.9) ? 'US' : pick(['CA', 'GB', 'DE', 'MX', 'FR']),
        companyName: company,
        preferredGuestNumber: chance(0.3) ? `PG${f.string.numeric(8)}` : '',
      };
      const roomCount = chance(0.85) ? 1 : f.number.int({ min: 2, max: 3 });
      const rooms: RoomRecord[] = [];
      for (let k = 0; k < roomCount; k++) {
        const roomType = pick(hotel.roomTypes);
        const occupancy = f.number.int({ min: 1, max: 3 });
        const guests = [{ firstName, lastName }];
        for (let g = 1; g < occupancy; g++)
          guests.push({ firstName: pick(firstNames), lastName: chance(0.5) ? lastName : pick(lastNames) });
        const nightlyRates = [];
        for (let d = arrivalDay; d < departureDay; d++)
          nightlyRates.push({
            day: d,
            amount: roomType.baseRate + (d === eventStartDay ? 20 : 0),
            currency: roomType.currency,
          });
        rooms.push({
          roomId: nextRoomId++,
          roomTypeId: roomType.roomTypeId,
          roomType: roomType.roomType,
          status: status === 'cancelled' || (roomCount > 1 && k > 0 && chance(0.1)) ? 'cancelled' : 'active',
          arrivalDay,
          departureDay,
          occupancy,
          guests,
          nightlyRates,
        });
      }
      const attendeeId = linked ? `A-${1000 + f.number.int({ min: 0, max: attendeePool })}` : null;
      const reservation: ReservationRecord = {
        reservationNumber,
        eventId: plan.eventId,
        status,
        hotelId: hotel.hotelId,
        confirmationNumber:
          status === 'accepted' ? `${hotel.name.slice(0, 2).toUpperCase()}-${f.string.numeric(5)}` : null,
        groupCode: code?.groupCode ?? null,
        subBlockId: code?.subBlockId ?? null,
        attendeeId,
        registrationEventId: attendeeId ? registrationEventId : null,
        arrivalDay,
        departureDay,
        createdMs,
        modifiedMs,
        label1: chance(0.4) ? pick(LABEL1) : null,
        label2: chance(0.2) ? `CC-${f.number.int({ min: 100, max: 140 })}` : null,
        contact,
        rooms,
      };
      reservations.push(reservation);
      if (holdsRooms(status)) {
        for (const room of rooms) {
          if (room.status !== 'active') continue;
          for (let d = room.arrivalDay; d < room.departureDay; d++) {
            const key = `${hotel.hotelId}:${room.roomTypeId}:${d}`;
            pickup.set(key, (pickup.get(key) ?? 0) + 1);
          }
        }
      }
      if (attendeeId) {
        const akey = `${attendeeId}|${registrationEventId}`;
        if (!attendees.has(akey)) {
          attendees.set(akey, {
            licensee: plan.licensee,
            attendeeId,
            registrationEventId,
            fields: { firstName, lastName, email: contact.email },
            // The registration system pushed its attendees again in the last three weeks.
            updatedMs: startMs - f.number.int({ min: 1, max: 21 }) * DAY,
          });
        }
        for (const [questionId, p] of [
          [1, 0.2],
          [7, 0.15],
          [8, 0.05],
        ] as const) {
          if (!chance(p)) continue;
          answers.push({
            eventId: plan.eventId,
            reservationNumber,
            questionId,
            answer:
              questionId === 8
                ? pick(['Vegetarian', 'Vegan', 'Gluten free', 'None'])
                : pick(questionId === 7 ? ['1', '0', '2'] : ['1', '0']),
            answeredMs: createdMs + 5 * 60_000,
          });
        }
      }
      reservationNumber += chance(0.1) ? 2 : 1;
    }

    // Main-block inventory: what was picked up plus some slack; the last hotel is sold out.
    for (const hotel of eventHotels) {
      const soldOut = hotel === eventHotels[eventHotels.length - 1] && eventHotels.length > 2;
      for (const roomType of hotel.roomTypes) {
        for (let d = firstNight; d < lastNight; d++) {
          const key = `${hotel.hotelId}:${roomType.roomTypeId}:${d}`;
          blocks[key] = (pickup.get(key) ?? 0) + (soldOut ? 0 : f.number.int({ min: 0, max: 40 }));
        }
      }
    }
  }

  const customFields = [
    { licensee: '1001', customFieldId: 1, name: 'Badge type', eventId: 5001 },
    { licensee: '1001', customFieldId: 2, name: 'Cost center', eventId: null },
    { licensee: '2002', customFieldId: 3, name: 'Room preference', eventId: null },
  ];
  for (const reservation of reservations) {
    if (reservation.eventId === 5001 && reservation.reservationNumber % 10 === 3) {
      customFieldValues.push({
        customFieldId: 1,
        reservationNumber: reservation.reservationNumber,
        value: reservation.label1 === 'Speaker' ? 'Speaker' : 'Delegate',
      });
    }
  }

  return {
    seed,
    startMs,
    licensees: DEMO_LICENSEES,
    events,
    hotels,
    groupCodes,
    blocks,
    reservations,
    questions,
    answers,
    customFields,
    customFieldValues,
    attendees: [...attendees.values()],
  };
}

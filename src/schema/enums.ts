import { builder } from './builder.ts';

/** Enums carry the service's lower-case values, so resolvers pass them on as they are. */
export const ReservationStatus = builder.enumType('ReservationStatus', {
  description: 'State of a reservation.',
  values: {
    NEW: { value: 'new', description: 'Made, not yet accepted by the hotel.' },
    ACCEPTED: { value: 'accepted', description: 'Accepted by the hotel.' },
    CANCELLED: { value: 'cancelled', description: 'Cancelled.' },
    DECLINED: { value: 'declined', description: 'Declined by the hotel.' },
  } as const,
});

export const RoomStatus = builder.enumType('RoomStatus', {
  description: 'State of a room within a reservation.',
  values: {
    ACTIVE: { value: 'active', description: 'The room is booked.' },
    CANCELLED: { value: 'cancelled', description: 'The room was cancelled.' },
  } as const,
});

export const HotelStatus = builder.enumType('HotelStatus', {
  description: 'State of a hotel within an event.',
  values: {
    ENABLED: { value: 'enabled', description: 'Offered for the event.' },
    DISABLED: { value: 'disabled', description: 'Assigned to the event but not offered.' },
  } as const,
});

export const QuestionType = builder.enumType('QuestionType', {
  description: 'How a question is shown to the attendee during reservation.',
  values: {
    TEXT_AREA: { value: 1, description: 'A free-text area (type 1 upstream).' },
    SELECT_BOX: { value: 2, description: 'A select box of options (type 2 upstream).' },
  } as const,
});

export const ShoppingViewScope = builder.enumType('ShoppingViewScope', {
  description: 'How much of each hotel the shopping view returns.',
  values: {
    FULL: { value: 'full', description: 'Hotel details, and with dates the available rooms and their nightly rates.' },
    SIMPLE: { value: 'simple', description: 'Name and, with dates, the lowest rate.' },
  } as const,
});

/** An upstream value the schema does not know becomes null (it stays visible in `raw`). */
export function known<T extends string | number>(values: readonly T[], value: unknown): T | null {
  return values.includes(value as T) ? (value as T) : null;
}

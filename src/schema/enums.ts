import {
  HOTEL_STATUSES,
  QUESTION_TYPES,
  RESERVATION_STATUSES,
  ROOM_STATUSES,
  SHOPPING_VIEW_SCOPES,
} from '../upstream/vocabulary.ts';
import { builder } from './builder.ts';

/**
 * A GraphQL enum over a vocabulary defined beside what it describes (the service's in
 * upstream/vocabulary.ts, the change feed's in changes/change.ts): its values are that
 * vocabulary's, so resolvers pass them on as they are. Each is named by its upper-case spelling
 * unless `names` says otherwise; `about` describes each value, and a value missing from it (or one
 * the vocabulary does not have) fails the typecheck.
 */
export function vocabularyEnum<const V extends string | number>(
  name: string,
  description: string,
  values: readonly V[],
  about: Record<V, string>,
  names: Record<V, string> | null = null,
) {
  const config: Record<string, { value: V; description: string }> = {};
  for (const value of values) {
    config[names?.[value] ?? String(value).toUpperCase()] = { value, description: about[value] };
  }
  return builder.enumType(name, { description, values: config });
}

export const ReservationStatus = vocabularyEnum('ReservationStatus', 'State of a reservation.', RESERVATION_STATUSES, {
  new: 'Made, not yet accepted by the hotel.',
  accepted: 'Accepted by the hotel.',
  cancelled: 'Cancelled.',
  declined: 'Declined by the hotel.',
});

export const RoomStatus = vocabularyEnum('RoomStatus', 'State of a room within a reservation.', ROOM_STATUSES, {
  active: 'The room is booked.',
  cancelled: 'The room was cancelled.',
});

export const HotelStatus = vocabularyEnum('HotelStatus', 'State of a hotel within an event.', HOTEL_STATUSES, {
  enabled: 'Offered for the event.',
  disabled: 'Assigned to the event but not offered.',
});

export const QuestionType = vocabularyEnum(
  'QuestionType',
  'How a question is shown to the attendee during reservation.',
  QUESTION_TYPES,
  { 1: 'A free-text area (type 1 upstream).', 2: 'A select box of options (type 2 upstream).' },
  { 1: 'TEXT_AREA', 2: 'SELECT_BOX' },
);

const scopeDescription = 'How much of each hotel the shopping view returns.';
export const ShoppingViewScope = vocabularyEnum('ShoppingViewScope', scopeDescription, SHOPPING_VIEW_SCOPES, {
  full: 'Hotel details, and with dates the available rooms and their nightly rates.',
  simple: 'Name and, with dates, the lowest rate.',
});

/** An upstream value the schema does not know becomes null (it stays visible in `raw`). */
export function known<T extends string | number>(values: readonly T[], value: unknown): T | null {
  return values.includes(value as T) ? (value as T) : null;
}

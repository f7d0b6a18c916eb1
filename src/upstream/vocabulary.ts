import { z } from 'zod';

/**
 * The service's enumerations, spelled as it spells them (upstream contract). The endpoint table's
 * parameters use these schemas; the GraphQL enums (schema/enums.ts) and the resolvers' types are
 * built from them, so a value is added or renamed here and nowhere else.
 */

export const reservationStatus = z.enum(['new', 'accepted', 'cancelled', 'declined']);
export type ReservationStatus = z.infer<typeof reservationStatus>;
export const RESERVATION_STATUSES = reservationStatus.options;

export const roomStatus = z.enum(['active', 'cancelled']);
export type RoomStatus = z.infer<typeof roomStatus>;
export const ROOM_STATUSES = roomStatus.options;

/** Whether a hotel is offered for an event. */
export const hotelStatus = z.enum(['enabled', 'disabled']);
export type HotelStatus = z.infer<typeof hotelStatus>;
export const HOTEL_STATUSES = hotelStatus.options;

/** How much of each hotel the shopping view returns. */
export const shoppingViewScope = z.enum(['full', 'simple']);
export type ShoppingViewScope = z.infer<typeof shoppingViewScope>;
export const SHOPPING_VIEW_SCOPES = shoppingViewScope.options;

/** A question's type: 1 a free-text area, 2 a select box of options. */
export const QUESTION_TYPES = [1, 2] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];
export const questionType = z.literal(QUESTION_TYPES);

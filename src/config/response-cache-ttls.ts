/**
 * How long the response cache keeps an answer, by the types it contains (docs/settings.md, "Caching"):
 * the shortest lifetime among the types of an answer is the answer's. A setting's defaults and
 * its reading (RESPONSE_CACHE_TTLS, config/environment.ts), so it lives with the settings; the
 * response cache (operations/response-cache/) imports it from here.
 */

const MINUTE = 60_000;
const FEW_SECONDS = 5_000;

/** The types whose lifetime can be set, and their defaults in milliseconds. */
export const DEFAULT_TTLS = {
  // What a licensee edits now and then in the console.
  Event: MINUTE,
  Hotel: MINUTE,
  GroupCode: MINUTE,
  EventQuestion: MINUTE,
  CustomField: MINUTE,
  // What attendees change all day: bookings, their pickup, availability, their answers.
  Reservation: FEW_SECONDS,
  RoomPickup: FEW_SECONDS,
  ShoppingViewHotel: FEW_SECONDS,
  Attendee: FEW_SECONDS,
  AttendeeAnswer: FEW_SECONDS,
} as const satisfies Record<string, number>;

export type CachedType = keyof typeof DEFAULT_TTLS;

export const CACHED_TYPES = Object.keys(DEFAULT_TTLS) as CachedType[];

/** An answer with none of the types above (a link, a `__typename`) is kept this long: the shortest. */
export const FALLBACK_TTL = FEW_SECONDS;

/** A lifetime longer than a day is a typo, not a plan. */
export const LONGEST_TTL = 86_400_000;

/**
 * Reads `Event=60000,Reservation=5000`: the defaults with these lifetimes replaced (0 never caches
 * an answer holding that type). Returns what is wrong, one line an entry, instead of throwing.
 */
export function parseTtls(text: string): { ttls: Record<CachedType, number>; problems: string[] } {
  const ttls: Record<CachedType, number> = { ...DEFAULT_TTLS };
  const problems: string[] = [];
  for (const entry of text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const match = /^([A-Za-z]+)\s*=\s*(\d+)$/.exec(entry);
    const type = match?.[1];
    if (!match || type === undefined) {
      problems.push(`${JSON.stringify(entry)} must be Type=milliseconds, like Event=60000`);
    } else if (!isCachedType(type)) {
      problems.push(
        `${JSON.stringify(type)} is not a type whose lifetime can be set (one of ${CACHED_TYPES.join(', ')})`,
      );
    } else if (Number(match[2]) > LONGEST_TTL) {
      problems.push(`${type}=${match[2]} is longer than a day (at most ${LONGEST_TTL})`);
    } else {
      ttls[type] = Number(match[2]);
    }
  }
  return { ttls, problems };
}

function isCachedType(name: string): name is CachedType {
  return Object.hasOwn(DEFAULT_TTLS, name);
}

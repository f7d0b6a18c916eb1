import { DateTime } from 'luxon';

/**
 * The service's date formats, as the emulator writes and reads them (docs/upstream.md, "Formats
 * and time zones"). Deliberately written apart from the gateway's converters in src/upstream.
 */
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A calendar day as days since 1970-01-01 (UTC), the emulator's internal date unit. */
export type Day = number;

const DAY_MS = 86_400_000;

export function dayOf(ms: number, zone = 'UTC'): Day {
  const dt = DateTime.fromMillis(ms, { zone });
  return Math.floor(Date.UTC(dt.year, dt.month - 1, dt.day) / DAY_MS);
}

/** 13-Mar-2027 */
export function formatDay(day: Day): string {
  const d = new Date(day * DAY_MS);
  return `${String(d.getUTCDate()).padStart(2, '0')}-${MONTHS[d.getUTCMonth()]}-${d.getUTCFullYear()}`;
}

/** 05-Jan-2027 4:02 pm, wall clock of the licensee's zone. */
export function formatTimestamp(ms: number, zone: string): string {
  const dt = DateTime.fromMillis(ms, { zone });
  const hour12 = dt.hour % 12 === 0 ? 12 : dt.hour % 12;
  const ampm = dt.hour < 12 ? 'am' : 'pm';
  return `${String(dt.day).padStart(2, '0')}-${MONTHS[dt.month - 1]}-${dt.year} ${hour12}:${String(dt.minute).padStart(2, '0')} ${ampm}`;
}

/** ISO 8601 with the offset of the given zone, as event dates are sent. */
export function formatIsoWithOffset(ms: number, zone: string): string {
  return DateTime.fromMillis(ms, { zone }).toISO({ suppressMilliseconds: true }) ?? '';
}

function monthIndex(name: string): number {
  return MONTHS.findIndex((m) => m.toLowerCase() === name.toLowerCase());
}

/** Reads dd-Mon-yyyy (month case-insensitive); null when it is not a real date. */
export function parseDay(text: string): Day | null {
  const m = /^(\d{1,2})-([A-Za-z]{3})-(\d{4})$/.exec(text.trim());
  if (!m) return null;
  const month = monthIndex(m[2]!);
  if (month < 0) return null;
  return validDay(Number(m[3]), month + 1, Number(m[1]));
}

/** Reads yyyy-mm-dd; null when it is not a real date. */
export function parseIsoDay(text: string): Day | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text.trim());
  if (!m) return null;
  return validDay(Number(m[1]), Number(m[2]), Number(m[3]));
}

/**
 * Years outside 1000-9999 are refused: the service's formats hold four-digit years, and a shorter
 * one is read back as another century (fuzzing found `0099-12-31` sent as `31-Dec-99`).
 */
export const MIN_YEAR = 1000;
export const MAX_YEAR = 9999;

function validDay(year: number, month: number, day: number): Day | null {
  if (year < MIN_YEAR || year > MAX_YEAR) return null;
  const d = new Date(Date.UTC(year, month - 1, day));
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month - 1 || d.getUTCDate() !== day) return null;
  return Math.floor(d.getTime() / DAY_MS);
}

/**
 * Reads `dd-Mon-yyyy h:mm am|pm` in the zone; returns the instant of that minute. A wall time that
 * occurs twice is the earlier instant, one that does not exist is moved forward by the gap.
 */
export function parseTimestamp(text: string, zone: string): number | null {
  const m = /^(\d{1,2})-([A-Za-z]{3})-(\d{4}) (\d{1,2}):(\d{2}) ?([AaPp][Mm])$/.exec(text.trim());
  if (!m) return null;
  const day = parseDay(`${m[1]}-${m[2]}-${m[3]}`);
  if (day === null) return null;
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  if (hour < 1 || hour > 12 || minute > 59) return null;
  const pm = m[6]!.toLowerCase() === 'pm';
  const hour24 = (hour % 12) + (pm ? 12 : 0);
  const d = new Date(day * DAY_MS);
  const local = { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: hour24, minute };
  // Luxon resolves a wall time that does not exist by moving it forward; for one that occurs twice
  // we pick the earlier of the two candidate offsets ourselves.
  const dt = DateTime.fromObject(local, { zone });
  if (!dt.isValid) return null;
  const earlier = dt.minus({ hours: 1 });
  if (earlier.hour === hour24 && earlier.minute === minute && earlier.day === local.day) return earlier.toMillis();
  return dt.toMillis();
}

export const DAY = DAY_MS;

import { createRequire } from 'node:module';
import { Temporal } from 'temporal-polyfill';
import { ISO_COUNTRY_NAMES } from './iso-country-names.ts';

/**
 * The service's formats ⇄ ISO 8601 (docs/upstream.md, "Formats and time zones"). Every converter
 * rejects what it cannot read with a FormatError naming the value.
 */
export class FormatError extends Error {
  override name = 'FormatError';
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH_LABELS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const UPSTREAM_DAY = /^(\d{1,2})-([A-Za-z]{3})-(\d{4})$/;
const UPSTREAM_TIMESTAMP = /^(\d{1,2})-([A-Za-z]{3})-(\d{4})\s+(\d{1,2}):(\d{2})\s*([AaPp][Mm])$/;
const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The years both sides write with four digits; outside them a date is refused, not misread (a
 * short year such as `31-Dec-99` is read as another one). The Date scalars hold clients to them too.
 */
export const FIRST_YEAR = 1000;
export const LAST_YEAR = 9999;

/** Whether a year is one the service writes and reads as itself. */
export function inYears(year: number): boolean {
  return year >= FIRST_YEAR && year <= LAST_YEAR;
}

function checkYear(year: number, text: string): void {
  if (!inYears(year)) throw new FormatError(`${JSON.stringify(text)} has a year outside ${FIRST_YEAR}–${LAST_YEAR}`);
}

function plainDate(year: number, month: number, day: number, text: string): Temporal.PlainDate {
  checkYear(year, text);
  try {
    return Temporal.PlainDate.from({ year, month, day }, { overflow: 'reject' });
  } catch {
    throw new FormatError(`${JSON.stringify(text)} is not a real date`);
  }
}

function upstreamDay(m: RegExpExecArray, text: string): Temporal.PlainDate {
  const month = MONTHS.indexOf(m[2]!.toLowerCase());
  if (month < 0) throw new FormatError(`${JSON.stringify(text)} has no month called ${m[2]}`);
  return plainDate(Number(m[3]), month + 1, Number(m[1]), text);
}

/** `yyyy-mm-dd` → `dd-Mon-yyyy` */
export function toUpstreamDate(iso: string): string {
  const d = parseIsoDate(iso);
  return `${String(d.day).padStart(2, '0')}-${MONTH_LABELS[d.month - 1]}-${d.year}`;
}

/** `yyyy-mm-dd`, checked to be a real date. */
export function parseIsoDate(iso: string): Temporal.PlainDate {
  if (!ISO_DAY.test(iso)) throw new FormatError(`${JSON.stringify(iso)} is not a date like 2027-03-13`);
  const [y, m, d] = iso.split('-').map(Number) as [number, number, number];
  return plainDate(y, m, d, iso);
}

/** Nights from one `yyyy-mm-dd` to a later one (both already checked). */
export function nightsBetween(checkIn: string, checkOut: string): number {
  return parseIsoDate(checkIn).until(parseIsoDate(checkOut), { largestUnit: 'days' }).days;
}

/**
 * Remembers recent conversions: a page of 1000 reservations repeats the same few dates and
 * minutes thousands of times, and a Temporal conversion costs microseconds each. Bounded, and only
 * successful conversions are kept.
 */
function memo<A extends string[]>(convert: (...args: A) => string, size = 50_000): (...args: A) => string {
  const seen = new Map<string, string>();
  return (...args: A) => {
    const key = args.join('\u0000');
    const hit = seen.get(key);
    if (hit !== undefined) return hit;
    const value = convert(...args);
    if (seen.size >= size) seen.delete(seen.keys().next().value!);
    seen.set(key, value);
    return value;
  };
}

/** `dd-Mon-yyyy` (month in any case), or already `yyyy-mm-dd` → `yyyy-mm-dd` */
export const fromUpstreamDate = memo(function fromUpstreamDate(text: string): string {
  const t = text.trim();
  const m = UPSTREAM_DAY.exec(t);
  if (m) return upstreamDay(m, t).toString();
  if (ISO_DAY.test(t)) return parseIsoDate(t).toString();
  throw new FormatError(`${JSON.stringify(text)} is not a date like 13-Mar-2027`);
});

/**
 * `dd-Mon-yyyy h:mm am|pm` on the wall clock of `zone` → ISO 8601 with offset. A wall time that
 * occurs twice is the earlier instant; one that does not exist moves forward by the gap
 * (Temporal's "compatible" disambiguation, as docs/upstream.md says). ISO input passes through.
 */
export const fromUpstreamTimestamp = memo(function fromUpstreamTimestamp(text: string, zone: string): string {
  const t = text.trim();
  const m = UPSTREAM_TIMESTAMP.exec(t);
  if (!m) {
    let zoned: Temporal.ZonedDateTime;
    try {
      zoned = Temporal.Instant.from(t).toZonedDateTimeISO(zone);
    } catch {
      throw new FormatError(`${JSON.stringify(text)} is not a time like 05-Jan-2027 4:02 pm`);
    }
    checkYear(zoned.year, text);
    return zoned.toString({ timeZoneName: 'never' });
  }
  const date = upstreamDay(m, t);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  if (hour < 1 || hour > 12 || minute > 59) throw new FormatError(`${JSON.stringify(text)} is not a time of day`);
  const hour24 = (hour % 12) + (m[6]!.toLowerCase() === 'pm' ? 12 : 0);
  const zoned = date.toPlainDateTime({ hour: hour24, minute }).toZonedDateTime(zone, { disambiguation: 'compatible' });
  return zoned.toString({ timeZoneName: 'never' });
});

/** An ISO 8601 instant → `dd-Mon-yyyy h:mm am|pm` on the wall clock of `zone` (seconds dropped). */
export function toUpstreamTimestamp(iso: string, zone: string): string {
  let zoned: Temporal.ZonedDateTime;
  try {
    zoned = Temporal.Instant.from(iso).toZonedDateTimeISO(zone);
  } catch {
    throw new FormatError(`${JSON.stringify(iso)} is not an ISO 8601 date-time with an offset`);
  }
  checkYear(zoned.year, iso);
  const hour12 = zoned.hour % 12 === 0 ? 12 : zoned.hour % 12;
  const day = `${String(zoned.day).padStart(2, '0')}-${MONTH_LABELS[zoned.month - 1]}-${zoned.year}`;
  return `${day} ${hour12}:${String(zoned.minute).padStart(2, '0')} ${zoned.hour < 12 ? 'am' : 'pm'}`;
}

/** An ISO 8601 timestamp with offset, normalized (event dates are specified in this form). */
export const normalizeIsoTimestamp = memo(function normalizeIsoTimestamp(text: string): string {
  let zoned: Temporal.ZonedDateTime;
  try {
    zoned = Temporal.ZonedDateTime.from(`${text.trim()}[${offsetOf(text.trim())}]`);
  } catch {
    throw new FormatError(`${JSON.stringify(text)} is not an ISO 8601 timestamp with offset`);
  }
  checkYear(zoned.year, text);
  return zoned.toString({ timeZoneName: 'never' });
});

function offsetOf(text: string): string {
  if (/Z$/i.test(text)) return 'UTC';
  const m = /([+-]\d{2}:?\d{2})$/.exec(text);
  if (!m) throw new FormatError(`${JSON.stringify(text)} has no offset`);
  return m[1]!;
}

/**
 * A country name reduced to what tells countries apart: no case, accents, punctuation or "the",
 * so "Bolivia (Plurinational State of)" and "Bolivia, Plurinational State of" are one name.
 */
function countryKey(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[(),.]/g, ' ')
    .replace(/\bthe\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

type Countries = typeof import('i18n-iso-countries');

/**
 * i18n-iso-countries and the name table built from it, loaded on the first country converted: most
 * gateways convert none for a long while, and the two weigh 2 MiB of heap from the start.
 */
let countryTables: { countries: Countries; byKey: Map<string, string> } | undefined;

function countryData(): { countries: Countries; byKey: Map<string, string> } {
  if (countryTables) return countryTables;
  const require = createRequire(import.meta.url);
  const countries = require('i18n-iso-countries') as Countries;
  countries.registerLocale(require('i18n-iso-countries/langs/en.json'));
  // Every English name i18n-iso-countries knows (official and alternatives), then the ISO 3166
  // names it lacks; ISO's table wins where the two disagree ("Congo" is the Republic of the Congo).
  const byKey = new Map<string, string>([
    ...Object.entries(countries.getNames('en', { select: 'all' })).flatMap(([code, names]) =>
      names.map((name) => [countryKey(name), code] as const),
    ),
    ...ISO_COUNTRY_NAMES.map(([name, code]) => [countryKey(name), code] as const),
    // ISO's short name for VA is "Holy See (the)"; pycountry, the source of that table, lists it longer.
    [countryKey('Holy See'), 'VA'],
  ]);
  countryTables = { countries, byKey };
  return countryTables;
}

/** Full English name (ISO 3166 short or formal, or a common one), ISO 3166 alpha-2 or alpha-3 → alpha-2. */
export function toCountryCode(text: string): string {
  const t = text.trim();
  // Names come last, and short ones too: "UK" is no code but a common name.
  const code = isoCode(t.toUpperCase()) ?? countryData().byKey.get(countryKey(t));
  if (!code) throw new FormatError(`${JSON.stringify(text)} is not a country name, ISO 3166 alpha-2 or alpha-3 code`);
  return code;
}

/** An ISO 3166 alpha-2 or alpha-3 code (upper case) as alpha-2; undefined when it is neither. */
function isoCode(text: string): string | undefined {
  if (/^[A-Z]{2}$/.test(text)) return countryData().countries.isValid(text) ? text : undefined;
  if (/^[A-Z]{3}$/.test(text)) return countryData().countries.alpha3ToAlpha2(text);
  return undefined;
}

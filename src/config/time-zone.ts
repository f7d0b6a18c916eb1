import { Temporal } from 'temporal-polyfill';

/** Whether a zone name is a time zone Temporal knows. */
export function isTimeZone(zone: string): boolean {
  try {
    Temporal.Now.zonedDateTimeISO(zone);
    return true;
  } catch {
    return false;
  }
}

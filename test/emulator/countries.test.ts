import countries from 'i18n-iso-countries';
import { describe, expect, it } from 'vitest';
import { toAlpha2 } from '../../src/emulator/countries.ts';
import { COMMON_NAMES_AND_CODES, NOT_COUNTRIES, OFFICIAL_SHORT_NAMES } from '../helpers/country-names.ts';

describe('postattendee country names', () => {
  // Fault: official ISO 3166 short names were refused; then "Bolivia, Plurinational State of" and
  // "Bahamas, The", which the gateway took, still were. The table is the gateway's too.
  it.each(OFFICIAL_SHORT_NAMES)('reads the official short name %s as %s', (name, alpha2) => {
    expect(toAlpha2(name)).toBe(alpha2);
  });

  it.each(COMMON_NAMES_AND_CODES)('reads the common name or code %s as %s', (name, alpha2) => {
    expect(toAlpha2(name)).toBe(alpha2);
  });

  it('reads every name the library holds as its own country; Congo is the one ISO calls so', () => {
    for (const [alpha2, names] of Object.entries(countries.getNames('en', { select: 'all' }))) {
      for (const name of names.filter((n) => n !== 'Congo')) expect([name, toAlpha2(name)]).toEqual([name, alpha2]);
    }
    expect(toAlpha2('Congo')).toBe('CG');
  });

  it.each(NOT_COUNTRIES)('refuses %j', (name) => {
    expect(toAlpha2(name)).toBeNull();
  });
});

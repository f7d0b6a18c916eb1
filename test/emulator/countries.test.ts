import countries from 'i18n-iso-countries';
import { describe, expect, it } from 'vitest';
import { toAlpha2 } from '../../src/emulator/countries.ts';

describe('postattendee country names', () => {
  // Fault: these official ISO 3166 short names were refused.
  it.each([
    ['Viet Nam', 'VN'],
    ['Cabo Verde', 'CV'],
    ['Réunion', 'RE'],
    ['United Kingdom of Great Britain and Northern Ireland', 'GB'],
    ['United Kingdom of Great Britain and Northern Ireland (the)', 'GB'],
    ['Bolivia (Plurinational State of)', 'BO'],
    ["Korea (the Democratic People's Republic of)", 'KP'],
    ['Tanzania, the United Republic of', 'TZ'],
    ['Bahamas (the)', 'BS'],
    ['Holy See', 'VA'],
  ])('reads the official short name %s as %s', (name, alpha2) => {
    expect(toAlpha2(name)).toBe(alpha2);
  });

  it.each([
    ['Vietnam', 'VN'],
    ['Cape Verde', 'CV'],
    ['Reunion', 'RE'],
    ['UK', 'GB'],
    ['great britain', 'GB'],
    ['Ivory Coast', 'CI'],
    ['  germany ', 'DE'],
    ['Turkey', 'TR'],
    ['gb', 'GB'],
    ['VNM', 'VN'],
  ])('reads the common name or code %s as %s', (name, alpha2) => {
    expect(toAlpha2(name)).toBe(alpha2);
  });

  it('reads every name the library holds as its own country; Congo is the one ISO calls so', () => {
    for (const [alpha2, names] of Object.entries(countries.getNames('en', { select: 'all' }))) {
      for (const name of names.filter((n) => n !== 'Congo')) expect([name, toAlpha2(name)]).toEqual([name, alpha2]);
    }
    expect(toAlpha2('Congo')).toBe('CG');
  });

  it.each(['Atlantis', 'XX', 'Korea', '', 'Viet'])('refuses %j', (name) => {
    expect(toAlpha2(name)).toBeNull();
  });
});

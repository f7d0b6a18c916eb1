import countries from 'i18n-iso-countries';
import english from 'i18n-iso-countries/langs/en.json' with { type: 'json' };
import { ISO_OFFICIAL_NAMES } from './iso-official-names.ts';

countries.registerLocale(english);

/**
 * The official ISO 3166-1 English short names that i18n-iso-countries does not hold (it keeps the
 * common names and a few alternatives: "Vietnam", not "Viet Nam"). The service accepts a
 * country's "full name" (docs/upstream.md, "Formats and time zones"), so both kinds are read.
 */
export const ISO_SHORT_NAMES: Readonly<Record<string, readonly string[]>> = {
  BO: ['Bolivia (Plurinational State of)'],
  CD: ['Congo (the Democratic Republic of the)', 'Congo, Democratic Republic of the'],
  CV: ['Cabo Verde'],
  FM: ['Micronesia (Federated States of)'],
  GB: ['United Kingdom of Great Britain and Northern Ireland'],
  IR: ['Iran (Islamic Republic of)'],
  KP: ["Korea (the Democratic People's Republic of)", "Korea, Democratic People's Republic of"],
  KR: ['Korea (the Republic of)'],
  MD: ['Moldova (the Republic of)'],
  PS: ['Palestine, State of'],
  RE: ['Réunion'],
  SH: ['Saint Helena, Ascension and Tristan da Cunha'],
  TW: ['Taiwan (Province of China)'],
  TZ: ['Tanzania, the United Republic of'],
  VA: ['Holy See'],
  VE: ['Venezuela (Bolivarian Republic of)'],
  VG: ['Virgin Islands (British)'],
  VI: ['Virgin Islands (U.S.)'],
  VN: ['Viet Nam'],
};

/**
 * Case, accents, spacing, punctuation and "the" do not tell names apart: "Bahamas (the)",
 * "Bahamas, The" and "BAHAMAS" are one country, as are "Bolivia (Plurinational State of)" and
 * "Bolivia, Plurinational State of", or "Réunion" and "Reunion".
 */
function normalize(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[(),.]/g, ' ')
    .replace(/\bthe\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const byName = new Map<string, string>();
for (const [alpha2, names] of Object.entries(countries.getNames('en', { select: 'all' }))) {
  // The library gives "Congo" to both Congos; the first holder (CG) is the one ISO calls Congo.
  for (const name of names) if (!byName.has(normalize(name))) byName.set(normalize(name), alpha2);
}
for (const [alpha2, names] of Object.entries(ISO_SHORT_NAMES)) {
  for (const name of names) byName.set(normalize(name), alpha2);
}
for (const [name, alpha2] of ISO_OFFICIAL_NAMES) byName.set(normalize(name), alpha2);

/** A country's English name (common, or ISO 3166 short or official), alpha-2 or alpha-3 code, as alpha-2; null when none of those. */
export function toAlpha2(text: string): string | null {
  const code = text.trim().toUpperCase();
  if (/^[A-Z]{2}$/.test(code) && countries.isValid(code)) return code;
  if (/^[A-Z]{3}$/.test(code)) {
    const alpha2 = countries.alpha3ToAlpha2(code);
    if (alpha2) return alpha2;
  }
  // Names come last: "UK" is no code but a common name.
  return byName.get(normalize(text)) ?? null;
}

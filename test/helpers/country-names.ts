/**
 * What a country may be given as, in the emulator and in the gateway alike:
 * one table both sides are tested against, each with its own function (the emulator's toAlpha2, the
 * gateway's toCountryCode), so neither can drift from the other unseen.
 */

/** Official ISO 3166 short names, in ISO's own spellings and punctuation. */
export const OFFICIAL_SHORT_NAMES: readonly (readonly [text: string, alpha2: string])[] = [
  ['Viet Nam', 'VN'],
  ['Cabo Verde', 'CV'],
  ['Réunion', 'RE'],
  ['United Kingdom of Great Britain and Northern Ireland', 'GB'],
  ['United Kingdom of Great Britain and Northern Ireland (the)', 'GB'],
  ['Bolivia (Plurinational State of)', 'BO'],
  ['Bolivia, Plurinational State of', 'BO'],
  ['Iran (Islamic Republic of)', 'IR'],
  ['Tanzania, the United Republic of', 'TZ'],
  ['Congo (the Democratic Republic of the)', 'CD'],
  ['Congo', 'CG'],
  ['Korea (the Republic of)', 'KR'],
  ["Korea (the Democratic People's Republic of)", 'KP'],
  ['Palestine, State of', 'PS'],
  ['Bahamas (the)', 'BS'],
  ['Holy See', 'VA'],
  ['Türkiye', 'TR'],
];

/** Common names (i18n-iso-countries' names and alternatives), other spellings, and codes. */
export const COMMON_NAMES_AND_CODES: readonly (readonly [text: string, alpha2: string])[] = [
  ['Germany', 'DE'],
  ['  germany ', 'DE'],
  ['United Kingdom', 'GB'],
  ['great britain', 'GB'],
  ['UK', 'GB'],
  ['Bahamas, The', 'BS'],
  ['United States of America', 'US'],
  ['USA', 'US'],
  ['Vietnam', 'VN'],
  ['Cape Verde', 'CV'],
  ['Reunion', 'RE'],
  ['Ivory Coast', 'CI'],
  ['Turkey', 'TR'],
  ['DE', 'DE'],
  ['gb', 'GB'],
  ['DEU', 'DE'],
  ['VNM', 'VN'],
];

/** Neither a name nor a code. */
export const NOT_COUNTRIES: readonly string[] = ['Atlantis', 'XX', 'XXX', 'Korea', 'Viet', ''];

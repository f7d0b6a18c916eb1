import { type Day, parseDay, parseIsoDay, parseTimestamp } from './dates.ts';
import { JsonText, objectMembers } from './json-members.ts';

/** An error the emulated service answers with (docs/upstream.md, "Errors"). */
export class ServiceError extends Error {
  override name = 'ServiceError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export const notFound = (what: string, field?: string) =>
  new ServiceError(404, 'NOT_FOUND', `${what} not found`, field);
export const invalid = (field: string, message: string) => new ServiceError(400, 'INVALID_PARAMETER', message, field);

/** `jsonObject` gives the members of a JSON object in the order written: `[key, value][]`. */
export type ParamType =
  | 'int'
  | 'bool'
  | 'string'
  | 'day'
  | 'isoDay'
  | 'timestamp'
  | 'json'
  | 'jsonObject'
  | readonly string[];

export interface ParamSpec {
  type: ParamType;
  required?: boolean;
  /** Maximum length of a string (255 unless given). */
  max?: number;
}

export type ParamSpecs = Record<string, ParamSpec>;
export type Params = Record<string, unknown>;

/** What readParams makes of a value of each type. */
type ValueOf<T extends ParamType> = T extends 'int' | 'timestamp'
  ? number
  : T extends 'bool'
    ? boolean
    : T extends 'string'
      ? string
      : T extends 'day' | 'isoDay'
        ? Day
        : T extends 'jsonObject'
          ? [string, unknown][]
          : T extends readonly (infer V)[]
            ? V
            : unknown;

/** The parameters readParams gives for `specs` (declared `satisfies ParamSpecs`, so their types stay literal). */
export type ValuesOf<S extends ParamSpecs> = { [K in keyof S]?: ValueOf<S[K]['type']> };

const MAX_DEFAULT = 255;

/**
 * Checks and converts the request's raw fields against an endpoint's specs: ints become numbers,
 * booleans booleans, `day` and `isoDay` Day numbers, `timestamp` epoch ms in `zone`. Unknown fields
 * are ignored, as the real service does.
 */
export function readParams(raw: Params, specs: ParamSpecs, zone: string): Params {
  const out: Params = {};
  for (const [name, spec] of Object.entries(specs)) {
    const value = raw[name];
    if (value === undefined || value === null || value === '') {
      if (spec.required) throw new ServiceError(400, 'MISSING_PARAMETER', `${name} is required`, name);
      continue;
    }
    out[name] = convert(name, value, spec, zone);
  }
  return out;
}

function convert(name: string, value: unknown, spec: ParamSpec, zone: string): unknown {
  const type = spec.type;
  if (type === 'json') {
    const text = jsonTextOf(value);
    return text === undefined ? value : parseJson(name, text);
  }
  if (type === 'jsonObject') {
    const text = jsonTextOf(value);
    const parsed = text === undefined ? undefined : parseJson(name, text);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw invalid(name, `${name} must be a JSON object`);
    return objectMembers(text!).map(([key, valueText]) => [key, JSON.parse(valueText)]);
  }
  if (typeof value === 'object') throw invalid(name, `${name} must be a single value`);
  const text = String(value);
  switch (type) {
    case 'int': {
      if (!/^-?\d{1,15}$/.test(text.trim())) throw invalid(name, `${name} must be an integer`);
      return Number(text);
    }
    case 'bool': {
      const t = text.trim().toLowerCase();
      if (t === 'true') return true;
      if (t === 'false') return false;
      throw invalid(name, `${name} must be true or false`);
    }
    case 'day':
      return orInvalid(parseDay(text), name, `${name} must be a date like 13-Mar-2027, in the years 1000 to 9999`);
    case 'isoDay':
      return orInvalid(parseIsoDay(text), name, `${name} must be a date like 2027-03-13, in the years 1000 to 9999`);
    case 'timestamp':
      return orInvalid(
        parseTimestamp(text, zone),
        name,
        `${name} must be a time like 05-Jan-2027 4:02 pm, in the years 1000 to 9999`,
      );
    case 'string': {
      const max = spec.max ?? MAX_DEFAULT;
      if (text.length > max) throw invalid(name, `${name} is longer than ${max} characters`);
      return text;
    }
    default: {
      const t = text.trim().toLowerCase();
      if (!type.includes(t)) throw invalid(name, `${name} must be one of ${type.join(', ')}`);
      return t;
    }
  }
}

/** JSON arrives as a form field's text, or as an object or array of a JSON body (JsonText). */
function jsonTextOf(value: unknown): string | undefined {
  if (value instanceof JsonText) return value.text;
  return typeof value === 'string' ? value : undefined;
}

function parseJson(name: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw invalid(name, `${name} is not valid JSON`);
  }
}

function orInvalid<T>(value: T | null, name: string, message: string): T {
  if (value === null) throw invalid(name, message);
  return value;
}

export type { Day };

import { GraphQLError, Kind, type ValueNode } from 'graphql';
import { z } from 'zod';
import { ErrorCode } from '../error-codes.ts';
import { FIRST_YEAR, inYears, LAST_YEAR, parseIsoDate } from '../upstream/formats.ts';
import { builder } from './builder.ts';

const isoDateTime = z.iso.datetime({ offset: true });

// Years outside the service's four digits (formats.ts: inYears) are refused here, before any call.

function badInput(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCode.BAD_USER_INPUT } });
}

function checkDateTime(value: unknown): string {
  if (typeof value !== 'string' || !isoDateTime.safeParse(value).success) {
    throw badInput(
      `DateTime must be an ISO 8601 date-time with offset, like 2027-03-12T08:00:00-05:00; got ${JSON.stringify(value)}`,
    );
  }
  // The year as written and the year of the instant in UTC (an offset can move it across a year).
  if (!inYears(Number(value.slice(0, 4))) || !inYears(new Date(value).getUTCFullYear())) {
    throw badInput(`DateTime must fall in the years ${FIRST_YEAR} to ${LAST_YEAR}; got ${JSON.stringify(value)}`);
  }
  return value;
}

function checkDate(value: unknown): string {
  const outOfYears = () =>
    badInput(`Date must fall in the years ${FIRST_YEAR} to ${LAST_YEAR}; got ${JSON.stringify(value)}`);
  if (typeof value === 'string' && /^\d{4}-/.test(value) && !inYears(Number(value.slice(0, 4)))) throw outOfYears();
  let date: ReturnType<typeof parseIsoDate>;
  try {
    if (typeof value !== 'string') throw new Error();
    date = parseIsoDate(value);
  } catch {
    throw badInput(`Date must be a real date like 2027-03-13; got ${JSON.stringify(value)}`);
  }
  if (!inYears(date.year)) throw outOfYears();
  return date.toString();
}

/** Where each scalar's format is specified: clients' generators map a scalar by it (docs/clients.md, "Clients"). */
const RFC_3339 = 'https://datatracker.ietf.org/doc/html/rfc3339';
const ISO_8601 = 'https://www.iso.org/iso-8601-date-and-time-format.html';
const ECMA_404 = 'http://www.ecma-international.org/publications/files/ECMA-ST/ECMA-404.pdf';
// graphql-js prints specifiedByURL; federation's printer reads the applied directive: both, so that
// `_service { sdl }`, and so the composed graph, keep the link too.
const specifiedBy = (url: string) => ({ specifiedByURL: url, directives: { specifiedBy: { url } } });

builder.scalarType('DateTime', {
  description:
    'An instant as ISO 8601 with its offset, e.g. 2027-03-12T08:00:00-05:00. Timestamps the service ' +
    'writes on a licensee’s wall clock are converted with that licensee’s time zone.',
  ...specifiedBy(RFC_3339),
  serialize: (value) => value,
  parseValue: checkDateTime,
  parseLiteral: (ast) => checkDateTime(ast.kind === Kind.STRING ? ast.value : undefined),
});

builder.scalarType('Date', {
  description: 'A calendar date, yyyy-mm-dd (the service writes dd-Mon-yyyy; the gateway converts both ways).',
  ...specifiedBy(ISO_8601),
  serialize: (value) => value,
  parseValue: checkDate,
  parseLiteral: (ast) => checkDate(ast.kind === Kind.STRING ? ast.value : undefined),
});

/**
 * Written here rather than taken from graphql-scalars: that package is loaded whole for this one
 * scalar (3.4 MiB of heap at start, docs/benchmarks.md, "Start and idle memory"). Any JSON value, as is.
 */
function jsonLiteral(ast: ValueNode, variables?: { readonly [name: string]: unknown } | null): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map((value) => jsonLiteral(value, variables));
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((field) => [field.name.value, jsonLiteral(field.value, variables)]));
    case Kind.VARIABLE:
      return variables?.[ast.name.value];
    default:
      throw badInput(`JSON cannot hold the enum value ${ast.value}`);
  }
}

builder.scalarType('JSON', {
  description: 'A record exactly as the reservation service sent it, unknown properties included.',
  ...specifiedBy(ECMA_404),
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: jsonLiteral,
});

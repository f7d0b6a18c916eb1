import { GraphQLError, Kind } from 'graphql';
import { JSONResolver } from 'graphql-scalars';
import { z } from 'zod';
import { parseIsoDate } from '../upstream/formats.ts';
import { builder } from './builder.ts';

const isoDateTime = z.iso.datetime({ offset: true });

function checkDateTime(value: unknown): string {
  if (typeof value !== 'string' || !isoDateTime.safeParse(value).success) {
    throw new GraphQLError(`DateTime must be an ISO 8601 date-time with offset, like 2027-03-12T08:00:00-05:00; got ${JSON.stringify(value)}`, {
      extensions: { code: 'BAD_USER_INPUT' },
    });
  }
  return value;
}

function checkDate(value: unknown): string {
  try {
    if (typeof value !== 'string') throw new Error();
    return parseIsoDate(value).toString();
  } catch {
    throw new GraphQLError(`Date must be a real date like 2027-03-13; got ${JSON.stringify(value)}`, { extensions: { code: 'BAD_USER_INPUT' } });
  }
}

builder.scalarType('DateTime', {
  description: 'An instant as ISO 8601 with its offset, e.g. 2027-03-12T08:00:00-05:00. Timestamps the service writes on a licensee’s wall clock are converted with that licensee’s time zone.',
  serialize: (value) => value,
  parseValue: checkDateTime,
  parseLiteral: (ast) => checkDateTime(ast.kind === Kind.STRING ? ast.value : undefined),
});

builder.scalarType('Date', {
  description: 'A calendar date, yyyy-mm-dd (the service writes dd-Mon-yyyy; the gateway converts both ways).',
  serialize: (value) => value,
  parseValue: checkDate,
  parseLiteral: (ast) => checkDate(ast.kind === Kind.STRING ? ast.value : undefined),
});

builder.addScalarType('JSON', JSONResolver, {
  description: 'A record exactly as the reservation service sent it, unknown properties included.',
});

import type { z } from 'zod';
import { BadInputError } from '../upstream/errors.ts';

/** Checks a client's input with zod before any upstream call; the error names the field. */
export function validate<S extends z.ZodType>(schema: S, value: unknown, root: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = [root, ...issue.path.map(String)].join('.');
  throw new BadInputError(`${path}: ${issue.message}`, path);
}

/** A check from a converter that throws on what it cannot read (the upstream formats). */
export function converts(convert: (text: string) => unknown): (text: string) => boolean {
  return (text) => {
    try {
      convert(text);
      return true;
    } catch {
      return false;
    }
  };
}

import type { z } from 'zod';
import { BadInputError, InvalidParamsError } from '../upstream/errors.ts';

/** Checks a client's input with zod before any upstream call; the error names the field. */
export function validate<S extends z.ZodType>(schema: S, value: unknown, root: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = [root, ...issue.path.map(String)].join('.');
  throw new BadInputError(`${path}: ${issue.message}`, path);
}

/** Upstream parameter names that a client's input calls otherwise (wire name → input name). */
export type InputNames = Readonly<Record<string, string>>;

/**
 * Runs `send`, whose parameters come from a client's input under `root`: a parameter the endpoint
 * table refuses (the one home of the input limits) is reported at its place in that input, e.g.
 * `input.options.0.label`, renamed where the input calls it otherwise.
 */
export async function asInput<T>(root: string, send: () => Promise<T>, names: InputNames = {}): Promise<T> {
  try {
    return await send();
  } catch (error) {
    throw atInput(root, error, names);
  }
}

/** `asInput` for a check that sends nothing (a filter applied by the gateway itself). */
export function checkInput(root: string, check: () => unknown, names: InputNames = {}): void {
  try {
    check();
  } catch (error) {
    throw atInput(root, error, names);
  }
}

function atInput(root: string, error: unknown, names: InputNames): unknown {
  if (!(error instanceof InvalidParamsError)) return error;
  const [first, ...rest] = error.path;
  const path = [root, ...(first === undefined ? [] : [names[first] ?? first, ...rest])].join('.');
  return new BadInputError(`${path}: ${error.reason}`, path);
}

import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * A system program some tests need (a browser, redis-server): found through its own variable
 * (`CHROMIUM_PATH`, `REDIS_SERVER_PATH`) or on PATH. A user's `npm test` skips those tests with a
 * hint saying how to install it; CI sets the `REQUIRE_…` variable, and there a missing one fails.
 */
export interface SystemProgram {
  /** What the skip message calls the tests: "browser", "Redis". */
  tests: string;
  /** Variable naming the binary directly; when set, only it is tried. */
  pathVariable: string;
  /** Names tried on PATH, in order. */
  names: readonly string[];
  /** Variable that turns a missing program into a failure (`1`). */
  requireVariable: string;
  installHint: string;
}

type Env = Record<string, string | undefined>;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The program's path, or undefined when there is none. */
export function findProgram(program: SystemProgram, env: Env = process.env): string | undefined {
  const named = env[program.pathVariable];
  if (named) return executable(named) ? named : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of program.names) {
      const candidate = join(dir, name);
      if (executable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** The program's path; without it, a skip with the install hint, or under `REQUIRE_…=1` an error. */
export function programOrSkip(program: SystemProgram, env: Env = process.env): string | undefined {
  const found = findProgram(program, env);
  if (found) return found;
  if (env[program.requireVariable] === '1') throw new Error(`${program.requireVariable}=1 but ${program.installHint}`);
  console.warn(`Skipping the ${program.tests} tests: ${program.installHint}`);
  return undefined;
}

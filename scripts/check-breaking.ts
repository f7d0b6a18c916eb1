import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Change, CriticalityLevel, diff } from '@graphql-inspector/core';
import { buildSchema, type GraphQLSchema } from 'graphql';

/**
 * `npm run check:schema [-- <released> <current> <changelog>]`: what a client of the graph would feel
 * if schema.graphql shipped now, compared with schema.released.graphql (the schema of the last
 * release, a copy of schema.graphql taken on release), with GraphQL Inspector's diff.
 *
 * - Breaking changes (a removed field, a field that may now be null, a new required argument, ...)
 *   fail the check (exit 1), each named by its path and Inspector's message, unless CHANGELOG.md
 *   documents it.
 * - Dangerous changes (an added enum value, a changed default, ...) are printed as warnings; they
 *   do not fail it.
 * - Safe changes (additions, descriptions) are not printed.
 *
 * The rule for documenting a breaking change: CHANGELOG.md's "# Changelog" section (up to the next
 * "# " or "## " heading; a "## Changelog" section of another file counts the same) holds a line starting `Unreleased:` (a list marker before it is allowed) that names
 * the change's path in backticks, e.g. `- Unreleased: `Event.eventId` may be null: ...why...`, and
 * says something besides the paths. A change without a path is named by its Inspector type
 * (`SCHEMA_QUERY_TYPE_CHANGED`). Only `Unreleased:` lines count, so an entry of a past release does
 * not wave through a later break of the same field. On release: copy schema.graphql to
 * schema.released.graphql and write the version in place of `Unreleased`.
 *
 * Paths default to schema.released.graphql, schema.graphql and CHANGELOG.md at the repository root,
 * so tests can run it on scratch copies. Exit 2: a file cannot be read or is not a valid schema.
 */

const ROOT = fileURLToPath(new URL('../', import.meta.url));

export interface CheckResult {
  /** Breaking changes that no `Unreleased:` line of the changelog names. */
  breaking: Change[];
  /** Breaking changes the changelog names. */
  documented: Change[];
  dangerous: Change[];
}

/** What names a change in the changelog: its path, or its type when it has none. */
export const changeName = (change: Change): string => change.path ?? change.type;

/** The lines of the changelog's "# Changelog" section that start `Unreleased:` and say more than paths. */
export function unreleasedEntries(changelog: string): string[] {
  const section = /^#{1,2} Changelog[ \t]*$([\s\S]*?)(?=^#{1,2} |(?![\s\S]))/m.exec(changelog)?.[1] ?? '';
  return section
    .split('\n')
    .map((line) => line.trim().replace(/^[-*+]\s+/, ''))
    .filter((line) => /^Unreleased:/.test(line))
    .filter((line) => /\w/.test(line.replace(/^Unreleased:/, '').replace(/`[^`]*`/g, '')));
}

/** The paths an entry names in backticks. */
const namesIn = (entry: string): string[] => [...entry.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.trim());

export async function checkSchemas(
  released: GraphQLSchema,
  current: GraphQLSchema,
  changelog: string,
): Promise<CheckResult> {
  const changes = await diff(released, current);
  const named = new Set(unreleasedEntries(changelog).flatMap(namesIn));
  const breaking = changes.filter((c) => c.criticality.level === CriticalityLevel.Breaking);
  return {
    breaking: breaking.filter((c) => !named.has(changeName(c))),
    documented: breaking.filter((c) => named.has(changeName(c))),
    dangerous: changes.filter((c) => c.criticality.level === CriticalityLevel.Dangerous),
  };
}

class InputError extends Error {}

function loadSchema(path: string): GraphQLSchema {
  let sdl: string;
  try {
    sdl = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InputError(`cannot read ${shown(path)}: ${(error as Error).message}`);
  }
  try {
    return buildSchema(sdl);
  } catch (error) {
    throw new InputError(`${shown(path)} is not a valid GraphQL schema: ${(error as Error).message}`);
  }
}

/** A path as the reader typed it, or relative to where they stand. */
const shown = (path: string): string => relative(process.cwd(), path) || path;

const describe = (c: Change): string =>
  `${changeName(c)}: ${c.message}${c.criticality.reason ? ` (${c.criticality.reason})` : ''}`;

/** Runs the check on files and prints its findings; returns the exit code. */
export async function main(args: string[], out = console.log, err = console.error): Promise<number> {
  if (args.length > 3) {
    err('usage: check-breaking.ts [released-schema] [current-schema] [changelog]');
    return 2;
  }
  const [releasedPath, currentPath, changelogPath] = [
    args[0] ?? resolve(ROOT, 'schema.released.graphql'),
    args[1] ?? resolve(ROOT, 'schema.graphql'),
    args[2] ?? resolve(ROOT, 'CHANGELOG.md'),
  ];
  let result: CheckResult;
  try {
    const released = loadSchema(releasedPath);
    const current = loadSchema(currentPath);
    let changelog: string;
    try {
      changelog = readFileSync(changelogPath, 'utf8');
    } catch (error) {
      throw new InputError(`cannot read ${shown(changelogPath)}: ${(error as Error).message}`);
    }
    result = await checkSchemas(released, current, changelog);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    err(`schema check: ${error.message}`);
    return 2;
  }

  const { breaking, documented, dangerous } = result;
  for (const c of dangerous) out(`warning: dangerous change ${describe(c)}`);
  for (const c of documented) out(`breaking change documented in the changelog: ${describe(c)}`);
  for (const c of breaking) err(`BREAKING change: ${describe(c)}`);
  if (breaking.length > 0) {
    err(
      `schema check failed: ${breaking.length} breaking change(s) against ${shown(releasedPath)}. Keep the old shape (deprecate ` +
        `instead of removing), or, when the break is meant, add a line to ${shown(changelogPath)}: ` +
        '"- Unreleased: `<path>` <what changed and why>".',
    );
    return 1;
  }
  if (documented.length > 0) {
    out(
      `schema check passed: every breaking change is in the changelog. On release, copy ${shown(currentPath)} to ` +
        `${shown(releasedPath)} and write the version in place of "Unreleased".`,
    );
  } else {
    out(
      `schema check passed: no breaking change against ${shown(releasedPath)}${dangerous.length ? ` (${dangerous.length} dangerous)` : ''}.`,
    );
  }
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2));
}

import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { main, unreleasedEntries } from '../../scripts/check-breaking.ts';

/**
 * `npm run check:schema`: schema.graphql against the released copy, on scratch copies of both and of
 * CHANGELOG.md, as CI runs it. A client-breaking change fails naming its field unless the changelog names it.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts/check-breaking.ts');
const schema = readFileSync(join(ROOT, 'schema.graphql'), 'utf8');
const changelog = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');

const dir = mkdtempSync(join(tmpdir(), 'check-breaking-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `sdl` with the one occurrence of `from` replaced (an edit that matches nothing would test nothing). */
function edit(sdl: string, from: string, to: string): string {
  expect(sdl.split(from).length - 1, `occurrences of ${JSON.stringify(from)}`).toBe(1);
  return sdl.replace(from, () => to);
}

const eventIdNullable = (sdl: string) =>
  edit(
    sdl,
    '"""The service’s event identifier."""\n  eventId: Int!',
    '"""The service’s event identifier."""\n  eventId: Int',
  );

let n = 0;
/** Writes the released schema, the current one and a changelog to a fresh scratch folder; returns their paths. */
function scratch(current: string, changelogText = changelog): string[] {
  const files = [`released-${n}.graphql`, `current-${n}.graphql`, `CHANGELOG-${n}.md`].map((name) => join(dir, name));
  n += 1;
  writeFileSync(files[0]!, schema);
  writeFileSync(files[1]!, current);
  writeFileSync(files[2]!, changelogText);
  return files;
}

/** Runs the check in-process as the CLI does; what it printed to stdout and stderr. */
async function check(current: string, changelogText?: string) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    scratch(current, changelogText),
    (line) => out.push(line),
    (line) => err.push(line),
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('the command', () => {
  const run = async (args: string[]) => {
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', SCRIPT, ...args], {
        cwd: ROOT,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  it('passes on identical schemas', async () => {
    const r = await run(scratch(schema));
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('schema check passed: no breaking change');
    expect(r.code).toBe(0);
  });

  it('fails (exit 1) when a non-null field becomes nullable, naming the field', async () => {
    const r = await run(scratch(eventIdNullable(schema)));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      "BREAKING change: Event.eventId: Field 'Event.eventId' changed type from 'Int!' to 'Int'",
    );
    expect(r.stderr).toContain('schema check failed: 1 breaking change(s)');
  });

  it('exits 2 naming a file that is missing or not a schema', async () => {
    const [released, , changelogPath] = scratch(schema);
    const missing = await run([released!, join(dir, 'nowhere.graphql'), changelogPath!]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nowhere.graphql');

    const invalid = await check('type Query {');
    expect(invalid.code).toBe(2);
    expect(invalid.err).toMatch(/current-\d+\.graphql is not a valid GraphQL schema/);
  });
});

describe('breaking changes', () => {
  it('a removed field fails, named', async () => {
    const r = await check(
      edit(schema, '  """Name of the event."""\n  name: String\n\n  """City where', '  """City where'),
    );
    expect(r.code).toBe(1);
    expect(r.err).toContain("BREAKING change: Event.name: Field 'name' was removed from object type 'Event'");
  });

  it('a new required argument fails, named', async () => {
    const r = await check(
      edit(
        schema,
        '"""Only the fields restricted to this event."""\n    eventId: Int\n',
        '"""Only the fields restricted to this event."""\n    eventId: Int!\n',
      ),
    );
    expect(r.code).toBe(1);
    expect(r.err).toContain('BREAKING change: Query.customFields.eventId:');
  });

  it('added optional fields pass and print nothing alarming', async () => {
    let sdl = edit(
      schema,
      '  """Name of the event."""\n',
      '  """Where the event is held."""\n  venue: String\n\n  """Name of the event."""\n',
    );
    sdl = edit(
      sdl,
      'input ReservationFilter {\n',
      'input ReservationFilter {\n  """Only these hotels."""\n  hotelIds: [Int!]\n\n',
    );
    const r = await check(sdl);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).not.toContain('warning');
  });

  it('a dangerous change (an added enum value) is printed as a warning and passes', async () => {
    const r = await check(
      edit(schema, '  DECLINED\n}\n', '  DECLINED\n\n  """Waiting for the hotel."""\n  WAITLISTED\n}\n'),
    );
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toContain(
      "warning: dangerous change ReservationStatus.WAITLISTED: Enum value 'WAITLISTED' was added to enum 'ReservationStatus'",
    );
  });
});

describe('the changelog', () => {
  const entry = '- Unreleased: `Event.eventId` may be null: events imported from the old system have none.\n';

  it('a breaking change named on an Unreleased line of the changelog passes, with a reminder for the release', async () => {
    const r = await check(eventIdNullable(schema), `${changelog}${entry}`);
    expect(r.err).toBe('');
    expect(r.out).toContain(
      "breaking change documented in the changelog: Event.eventId: Field 'Event.eventId' changed type",
    );
    expect(r.out).toContain('On release, copy');
    expect(r.code).toBe(0);
  });

  it('documents only the changes it names: another breaking change still fails', async () => {
    const sdl = edit(
      eventIdNullable(schema),
      '  """Name of the event."""\n  name: String\n\n  """City where',
      '  """City where',
    );
    const r = await check(sdl, `${changelog}${entry}`);
    expect(r.code).toBe(1);
    expect(r.err).toContain('BREAKING change: Event.name:');
    expect(r.err).not.toContain('Event.eventId');
  });

  it.each([
    [
      'a released entry (it documents a past release, not this change)',
      `${changelog}- 0.1.0: \`Event.eventId\` may be null.\n`,
    ],
    ['an entry that gives no reason', `${changelog}- Unreleased: \`Event.eventId\`\n`],
    ['an entry outside the Changelog section', `${changelog.replace('# Changelog', `${entry}\n# Changelog`)}`],
    ['a file without a Changelog section', `# Readme\n\n${entry}`],
  ])('does not accept %s', async (_name, text) => {
    const r = await check(eventIdNullable(schema), text);
    expect(r.code).toBe(1);
    expect(r.err).toContain('BREAKING change: Event.eventId:');
  });

  it('reads the section up to the next heading, list markers optional', () => {
    const text =
      '## Changelog\n\nFormat.\n\nUnreleased: `A.b` renamed, see `A.c`.\n* Unreleased: `D.e` gone.\n\n## Later\n\n- Unreleased: `F.g` no.\n';
    expect(unreleasedEntries(text)).toEqual(['Unreleased: `A.b` renamed, see `A.c`.', 'Unreleased: `D.e` gone.']);
  });
});

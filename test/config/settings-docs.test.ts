import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { allowedValues, printSettings, SETTINGS_DOC } from '../../scripts/print-settings.ts';
import { SETTINGS } from '../../src/config/environment.ts';
import { SETTING_GROUPS } from '../../src/config/settings-docs.ts';

/**
 * docs/settings.md is printed from the schema of the environment and the meanings beside it
 * (scripts/print-settings.ts, run by `npm run codegen`): the committed file must be that output, so
 * a setting renamed, added or given another default cannot be missing or stale in it.
 */
describe('docs/settings.md', () => {
  it('is what npm run codegen prints from src/config', () => {
    const committed = readFileSync(SETTINGS_DOC, 'utf8');
    expect(committed, 'docs/settings.md is stale: run npm run codegen and commit it').toBe(printSettings());
  });

  it('has a row for every setting the schema accepts, each with its default and allowed values', () => {
    const doc = readFileSync(SETTINGS_DOC, 'utf8');
    const rows = doc.split('\n').filter((line) => /^\| `[A-Z]/.test(line));
    for (const name of SETTINGS) {
      const row = rows.find((line) => line.split(' | ')[0]!.includes(`\`${name}\``));
      expect(row, name).toBeDefined();
      const cells = row!.split(' | ');
      expect(cells, name).toHaveLength(4);
      expect(
        cells.every((cell) => cell.replace(/\|/g, '').trim() !== ''),
        name,
      ).toBe(true);
    }
  });

  it('cannot be printed while a setting of the schema has no meaning written for it', () => {
    const { 'live-changes': liveChanges, ...others } = SETTING_GROUPS;
    const without = {
      ...others,
      'live-changes': liveChanges!.filter((row) => !row.settings.includes('SUBSCRIPTIONS_PER_CLIENT')),
    };
    expect(() => printSettings(without)).toThrow('SUBSCRIPTIONS_PER_CLIENT has no row in src/config/settings-docs.ts');
  });

  it('cannot be printed while a group has no place in the template', () => {
    expect(() => printSettings({ ...SETTING_GROUPS, nowhere: [] })).toThrow(
      'the group "nowhere" has no place in scripts/settings.template.md',
    );
  });

  it('shows the defaults the schema holds, and those it does not only as written', () => {
    const doc = readFileSync(SETTINGS_DOC, 'utf8');
    expect(doc).toContain('| `QUERY_MAX_UPSTREAM_CALLS` |');
    expect(doc).toMatch(/^\| `QUERY_MAX_UPSTREAM_CALLS` \| [^|]+ \| `120` \| a whole number, 1 to 100000 \|$/m);
    expect(doc).toMatch(/^\| `REDIS_FALLBACK_SHARE` \| .* \| `1\/3` \| [^|]*more than 0, at most 1 \|$/m);
    // A row without its default text for a setting the schema gives none cannot be printed.
    const limits = SETTING_GROUPS.limits!.map((row) =>
      row.settings.includes('MAX_INFLIGHT_BYTES') ? { settings: row.settings, meaning: row.meaning } : row,
    );
    expect(() => printSettings({ ...SETTING_GROUPS, limits })).toThrow('MAX_INFLIGHT_BYTES: no default in the schema');
  });

  it('says what a schema allows', () => {
    expect(allowedValues(z.enum(['on', 'off']).default('on'))).toBe('`on`, `off`');
    expect(allowedValues(z.coerce.number().int().min(1).max(9).optional())).toBe('a whole number, 1 to 9');
    expect(allowedValues(z.string().regex(/^a$/, 'must be the letter a'))).toBe('the letter a');
    expect(
      allowedValues(
        z
          .string()
          .transform((s) => s.split(','))
          .pipe(z.array(z.string().regex(/^b$/, 'each must be the letter b'))),
      ),
    ).toBe('a comma-separated list; each the letter b');
  });
});

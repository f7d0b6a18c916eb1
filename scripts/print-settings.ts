import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { SETTING_SCHEMAS, type SettingName } from '../src/config/environment.ts';
import { SETTING_GROUPS, type SettingRow } from '../src/config/settings-docs.ts';

/**
 * `npm run codegen` prints docs/settings.md with this: every setting the environment's schema
 * accepts (src/config/environment.ts), in the tables of its group, with its meaning
 * (src/config/settings-docs.ts), its default and the values it allows (both read from the schema),
 * the text around the tables from scripts/settings.template.md. A setting of the schema without a
 * row, a row naming none, or a group the template does not place stops it.
 * `test/config/settings-docs.test.ts` fails when the committed docs/settings.md is not its output.
 */

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const TEMPLATE = resolve(ROOT, 'scripts/settings.template.md');
export const SETTINGS_DOC = resolve(ROOT, 'docs/settings.md');

type Schema = z.ZodType;
/** The definition of a schema or of a check (zod 4 keeps both under `_zod.def`). */
const defOf = (schema: unknown) =>
  (schema as { _zod: { def: Record<string, unknown> & { type: string; check?: string } } })._zod.def;

/** The schema under `.default()` and `.optional()`, with its default when it has one. */
function unwrap(schema: Schema): { inner: Schema; default?: unknown } {
  let inner = schema;
  let value: unknown;
  for (;;) {
    const def = defOf(inner);
    if (def.type === 'default') value ??= def.defaultValue;
    else if (def.type !== 'optional') return value === undefined ? { inner } : { inner, default: value };
    inner = def.innerType as Schema;
  }
}

/** A default as docs show it: a list as its comma-separated text, a share like 1/3 as that fraction. */
function shownValue(value: unknown): string {
  if (Array.isArray(value)) return value.length ? `\`${value.join(',')}\`` : 'none';
  if (typeof value === 'number' && !Number.isInteger(value)) {
    for (let d = 2; d <= 12; d++) {
      const n = value * d;
      if (Math.abs(n - Math.round(n)) < 1e-9 && String(value).length > 6) return `\`${Math.round(n)}/${d}\``;
    }
  }
  return `\`${String(value)}\``;
}

/** The message a check was given (`'must be …'`), as the clause after "must be". */
function ruleOf(check: unknown): string | undefined {
  const error = (check as { _zod?: { def?: { error?: (issue?: unknown) => unknown } } })._zod?.def?.error;
  const message = typeof error === 'function' ? error() : undefined;
  const text = typeof message === 'string' ? message : (message as { message?: string } | undefined)?.message;
  return text?.replace(/^(each )?must be /, '');
}

/** What values a setting's schema allows, in words, read from the schema itself. */
export function allowedValues(schema: Schema): string {
  const { inner } = unwrap(schema);
  const def = defOf(inner);
  if (def.type === 'enum') return (inner as unknown as z.ZodEnum).options.map((o) => `\`${String(o)}\``).join(', ');
  if (def.type === 'number') {
    const n = inner as unknown as z.ZodNumber;
    const checks = (def.checks as unknown[] | undefined) ?? [];
    const exclusiveMin = checks.some(
      (c) => defOf(c as Schema).check === 'greater_than' && !defOf(c as Schema).inclusive,
    );
    const lower = n.minValue === null ? '' : exclusiveMin ? `more than ${n.minValue}` : `${n.minValue}`;
    const upper = n.maxValue === null || n.maxValue >= Number.MAX_SAFE_INTEGER ? '' : `${n.maxValue}`;
    const range = exclusiveMin ? `${lower}, at most ${upper}` : upper ? `${lower} to ${upper}` : `at least ${lower}`;
    const own = ruleOf(inner);
    const kind = own && own !== 'a number' ? own : n.isInt ? 'a whole number' : 'a number';
    return `${kind}, ${range}`;
  }
  if (def.type === 'pipe') {
    const out = defOf(def.out as Schema);
    if (out.type === 'array') return `a comma-separated list; each ${allowedValues(out.element as Schema)}`;
    const input = allowedValues(def.in as Schema);
    const output = allowedValues(def.out as Schema);
    return input === 'text' ? output : input;
  }
  if (def.type === 'string') {
    const rules = ((def.checks as unknown[] | undefined) ?? []).flatMap((c) => {
      const cd = defOf(c as Schema);
      if (cd.check === 'min_length') return [];
      return ruleOf(c) ?? [];
    });
    const own = ruleOf(inner) ?? (def.format === 'url' ? 'a URL' : undefined);
    // A rule another one says more fully (`an https URL`, `an https URL (http only on …)`) once.
    const all = [own, ...rules].filter((rule): rule is string => Boolean(rule));
    const kept = all.filter((rule, i) => !all.some((other, j) => j !== i && other !== rule && other.startsWith(rule)));
    return [...new Set(kept)].join('; ') || 'text';
  }
  return 'text';
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function row(r: SettingRow): string {
  const names = r.settings.map((name) => `\`${name}\``).join(', ');
  const schemas = r.settings.map((name) => [name, SETTING_SCHEMAS[name] as unknown as Schema] as const);
  let shownDefault = r.default;
  if (shownDefault === undefined) {
    const missing = schemas.filter(([, schema]) => !('default' in unwrap(schema))).map(([name]) => name);
    if (missing.length)
      throw new Error(
        `${missing.join(', ')}: no default in the schema; give the row a default text in settings-docs.ts`,
      );
    shownDefault = schemas.map(([, schema]) => shownValue(unwrap(schema).default)).join(', ');
  }
  const allowed = schemas.map(([name, schema]) => [name, allowedValues(schema)] as const);
  const same = allowed.every(([, text]) => text === allowed[0]![1]);
  const shownAllowed = same ? allowed[0]![1] : allowed.map(([name, text]) => `\`${name}\`: ${text}`).join('; ');
  return `| ${names} | ${cell(r.meaning)} | ${cell(shownDefault)} | ${cell(shownAllowed)} |`;
}

/** docs/settings.md as it should be committed (`groups`: the meanings, replaced in tests). */
export function printSettings(groups: Readonly<Record<string, readonly SettingRow[]>> = SETTING_GROUPS): string {
  const named = Object.values(groups).flatMap((rows) => rows.flatMap((r) => r.settings));
  const problems = [
    ...Object.keys(SETTING_SCHEMAS)
      .filter((name) => !named.includes(name as SettingName))
      .map((name) => `${name} has no row in src/config/settings-docs.ts`),
    ...named.filter((name, i) => named.indexOf(name) !== i).map((name) => `${name} has two rows`),
    ...named.filter((name) => !(name in SETTING_SCHEMAS)).map((name) => `${name} is not a setting of the schema`),
  ];
  const placed = new Set<string>();
  const body = readFileSync(TEMPLATE, 'utf8').replace(/^<!-- settings table: ([\w-]+) -->$/gm, (_all, key: string) => {
    const rows = groups[key];
    if (!rows) {
      problems.push(`the template places a group "${key}" that settings-docs.ts does not have`);
      return '';
    }
    placed.add(key);
    return ['| variable | meaning | default | allowed values |', '|---|---|---|---|', ...rows.map(row)].join('\n');
  });
  for (const key of Object.keys(groups))
    if (!placed.has(key)) problems.push(`the group "${key}" has no place in scripts/settings.template.md`);
  if (problems.length) throw new Error(`cannot print docs/settings.md:\n  ${problems.join('\n  ')}`);
  const header =
    '<!-- Printed by scripts/print-settings.ts (npm run codegen) from the schema in src/config/environment.ts, ' +
    'the meanings in src/config/settings-docs.ts and the text of scripts/settings.template.md: edit those, not this file. -->';
  return `${header}\n\n${body}`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(SETTINGS_DOC, printSettings());
  console.log('wrote docs/settings.md');
}

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/error-codes.ts';

/** The table of codes (src/error-codes.ts) against what clients are told: the README's errors table, the contract's list. */
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const contract = readFileSync(new URL('./contract/graphql-contract.graphql', import.meta.url), 'utf8');

/** The first column of the README's table whose header starts `| code | meaning |`. */
function readmeCodes(): string[] {
  const lines = readme.split('\n');
  const header = lines.findIndex((line) => /^\|\s*code\s*\|\s*meaning\s*\|/.test(line));
  const rows = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(/^\|\s*`([A-Z_]+)`/.exec(line)?.[1] ?? line);
  }
  return rows;
}

/** The codes of the contract's "# Errors:" comment, one a line. */
function contractCodes(): string[] {
  const comment = contract
    .slice(contract.indexOf('# Errors:'))
    .split('\n')
    .filter((line) => line.startsWith('#'));
  return comment.flatMap((line) => /^#\s{3}([A-Z][A-Z_]+)\s/.exec(line)?.[1] ?? []);
}

describe('error codes', () => {
  it('every code documented to clients is in the table, and every code of the table is documented', () => {
    const fromReadme = readmeCodes();
    const fromContract = contractCodes();
    expect(fromReadme.length).toBeGreaterThan(5);
    expect(fromContract.length).toBeGreaterThan(5);
    const documented = new Set([...fromReadme, ...fromContract]);
    expect([...documented].filter((code) => !(code in ERROR_CODES))).toEqual([]);
    expect(Object.keys(ERROR_CODES).filter((code) => !documented.has(code))).toEqual([]);
  });
});

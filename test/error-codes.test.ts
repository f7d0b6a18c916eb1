import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/error-codes.ts';

/** The table of codes (src/error-codes.ts) against what clients are told: the errors table of docs/clients.md, the contract's list. */
const clientsDoc = readFileSync(new URL('../docs/clients.md', import.meta.url), 'utf8');
const contract = readFileSync(new URL('./contract/graphql-contract.graphql', import.meta.url), 'utf8');

/** The first column of docs/clients.md's table whose header starts `| code | meaning |`. */
function documentedCodes(): string[] {
  const lines = clientsDoc.split('\n');
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
    const fromDocs = documentedCodes();
    const fromContract = contractCodes();
    expect(fromDocs.length).toBeGreaterThan(5);
    expect(fromContract.length).toBeGreaterThan(5);
    const documented = new Set([...fromDocs, ...fromContract]);
    expect([...documented].filter((code) => !(code in ERROR_CODES))).toEqual([]);
    expect(Object.keys(ERROR_CODES).filter((code) => !documented.has(code))).toEqual([]);
  });
});

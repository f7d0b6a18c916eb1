import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
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

const SRC = new URL('../src/', import.meta.url).pathname;

function files(dir: string, extension: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path, extension) : extension.test(name) ? [path] : [];
  });
}

/**
 * The gateway's files whose errors reach clients: all of src/ but the emulator, which speaks the
 * upstream service's own codes (INVALID_TOKEN, MISSING_PARAMETER …), as the gateway's classify.ts reads them.
 */
const gatewayFiles = () =>
  files(SRC, /\.ts$/)
    .filter((file) => !relative(SRC, file).startsWith('emulator/'))
    .map((file) => ({ file: relative(SRC, file), text: readFileSync(file, 'utf8') }));

const CODE = `['"\`]([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{3,})['"\`]`;

/** The arguments of the call whose `(` is at `open`, split at its top-level commas. */
function callArguments(text: string, open: number): string[] {
  const args: string[] = [];
  let depth = 0;
  let start = open + 1;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) return [...args, text.slice(start, i)];
    } else if (c === ',' && depth === 1) {
      args.push(text.slice(start, i));
      start = i + 1;
    }
  }
  return args;
}

/**
 * Every code the gateway's own code puts in an answer, read from the code, with where: a literal in
 * `code: 'X'` (an `extensions` object or any other), `ErrorCode.X`, a comparison with an answer's
 * `extensions.code`, and a literal passed to a function or class whose parameter is named `code`
 * (`withCode(error, 'X')`, `new UpstreamError('X', …)`).
 */
function codesInSource(): { code: string; where: string }[] {
  const found: { code: string; where: string }[] = [];
  const sources = gatewayFiles();
  const patterns = [
    new RegExp(`(?<![.\\w])code\\s*:\\s*${CODE}`, 'g'),
    /\bErrorCode\.([A-Z][A-Z0-9_]*)/g,
    new RegExp(`extensions\\??\\.(?:code|\\[['"]code['"]\\])\\s*[!=]==?\\s*${CODE}`, 'g'),
    new RegExp(`${CODE}\\s*[!=]==?\\s*[\\w.?]*extensions\\??\\.code\\b`, 'g'),
  ];
  for (const { file, text } of sources)
    for (const pattern of patterns)
      for (const match of text.matchAll(pattern)) found.push({ code: match[1]!, where: file });
  // Functions, arrow functions and classes (by their constructor) taking a parameter named `code`.
  const takers = new Map<string, number>();
  const declarations =
    /(?:function\s+(\w+)\s*(?:<[^>]*>)?\s*\(|(?:const|let)\s+(\w+)\s*=\s*(?:async\s*)?\(|class\s+(\w+)[^{]*\{[^]*?constructor\s*\()/g;
  for (const { text } of sources)
    for (const match of text.matchAll(declarations)) {
      const open = match.index + match[0].length - 1;
      const index = callArguments(text, open).findIndex((parameter) =>
        /^\s*(?:(?:readonly|public|private|protected)\s+)?code\b/.test(parameter),
      );
      if (index >= 0) takers.set((match[1] ?? match[2] ?? match[3])!, index);
    }
  for (const { file, text } of sources)
    for (const [name, index] of takers)
      for (const call of text.matchAll(new RegExp(`\\b${name}\\s*\\(`, 'g'))) {
        const argument = callArguments(text, call.index + call[0].length - 1)[index]?.trim() ?? '';
        const literal = new RegExp(`^${CODE}$`).exec(argument);
        if (literal) found.push({ code: literal[1]!, where: `${file} (${name})` });
      }
  return found;
}

/**
 * The options by which a plugin is handed the gateway's own errors, which then replace the plugin's
 * (their codes are in codesInSource): persisted operations' `customErrors`, generic-auth's
 * `validateUser` (whose refusals replace its default UNAUTHORIZED_FIELD_OR_TYPE).
 */
const OWN_ERRORS = /\b(?:customErrors|validateUser)\s*:/;

/**
 * The codes Yoga and the Yoga and envelop plugins the gateway imports write into answers
 * (`code: 'X'`, `extensions.code ||= 'X'` in their published code): GRAPHQL_PARSE_FAILED and the
 * like reach clients as Yoga wrote them, unless the gateway hands the plugin its own errors.
 */
function codesOfLibraries(): { code: string; where: string }[] {
  const require = createRequire(import.meta.url);
  const sources = gatewayFiles();
  const packages = new Set(
    sources.flatMap(({ text }) =>
      [...text.matchAll(/from\s+['"]((?:graphql-yoga|@graphql-yoga\/[\w-]+|@envelop\/[\w-]+))['"]/g)].map((m) => m[1]!),
    ),
  );
  const found: { code: string; where: string }[] = [];
  for (const name of packages) {
    // A plugin of the package given the gateway's own errors in its options.
    const replaced = sources.some(({ text }) =>
      [...text.matchAll(new RegExp(`import\\s*\\{([^}]*)\\}\\s*from\\s*['"]${name}['"]`, 'g'))]
        .flatMap((m) => m[1]!.split(',').map((part) => part.replace(/^\s*type\s+/, '').trim()))
        .filter((imported) => /^use\w+$/.test(imported))
        .some((plugin) =>
          [...text.matchAll(new RegExp(`\\b${plugin}\\s*(?:<[^(]*?>)?\\s*\\(`, 'g'))].some((call) =>
            OWN_ERRORS.test(callArguments(text, call.index + call[0].length - 1).join(',')),
          ),
        ),
    );
    if (replaced) continue;
    let root = dirname(require.resolve(`${name}/package.json`));
    if (statSync(join(root, 'esm'), { throwIfNoEntry: false })?.isDirectory()) root = join(root, 'esm');
    for (const file of files(root, /\.js$/)) {
      const text = readFileSync(file, 'utf8');
      const written = new RegExp(
        `(?:(?<![.\\w])code\\s*:|\\bcode\\s*(?:\\|\\||\\?\\?)?=(?!=)|\\[['"]code['"]\\]\\s*(?:\\|\\||\\?\\?)?=(?!=))\\s*${CODE}`,
        'g',
      );
      for (const match of text.matchAll(written))
        found.push({ code: match[1]!, where: `${name} (${relative(root, file)})` });
    }
  }
  return found;
}

describe('every code an answer carries is in ERROR_CODES', () => {
  it('the codes the gateway’s own code writes', () => {
    const found = codesInSource();
    // The scan sees codes (a scan that finds nothing would pass on anything).
    expect(new Set(found.map(({ code }) => code)).size).toBeGreaterThan(10);
    expect(found.some(({ code }) => code === 'MISDIRECTED_REQUEST')).toBe(true);
    expect(found.filter(({ code }) => !(code in ERROR_CODES)).map(({ code, where }) => `${where}: ${code}`)).toEqual(
      [],
    );
  });

  it('the codes Yoga and its plugins write, which the gateway passes on', () => {
    const found = codesOfLibraries();
    expect(found.some(({ code }) => code === 'GRAPHQL_PARSE_FAILED')).toBe(true);
    expect(found.filter(({ code }) => !(code in ERROR_CODES)).map(({ code, where }) => `${where}: ${code}`)).toEqual(
      [],
    );
  });
});

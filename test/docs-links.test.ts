import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link of the documentation a reader follows (README.md, CHANGELOG.md, docs/*.md)
 * lands: the file exists inside the repository, and an anchor is a heading of the target file by
 * GitHub's rules (lowercase; punctuation but `-` and `_` dropped; spaces become `-`; a repeated
 * heading gets `-1`, `-2` …).
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));

const documents = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** Text outside fenced code blocks (a `#` line in a shell example is no heading, a `](x)` in code no link). */
function prose(markdown: string): string {
  let fenced = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

/** GitHub's anchor of a heading's text. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors a markdown file offers: its headings' slugs, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const m of prose(markdown).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of markdown.matchAll(/<a (?:name|id)="([^"]+)"/g)) anchors.add(m[1]!);
  return anchors;
}

/** The problems of every relative link in one document (`text`: its content, read when not given). */
function brokenLinks(document: string, text = readFileSync(join(ROOT, document), 'utf8')): string[] {
  const path = join(ROOT, document);
  const broken: string[] = [];
  for (const m of prose(text)
    .replace(/`[^`\n]*`/g, '')
    .matchAll(/\]\(([^)\s]*?)(#[^)\s]*)?(?:\s+"[^"]*")?\)/g)) {
    const [target, anchor] = [m[1]!, m[2]?.slice(1)];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const resolved = target === '' ? path : resolve(dirname(path), decodeURI(target));
    const shown = `${document}: ${m[0].slice(1)}`;
    if (relative(ROOT, resolved).startsWith('..') || !existsSync(resolved)) {
      broken.push(`${shown}: no such file`);
      continue;
    }
    if (anchor === undefined) continue;
    if (!resolved.endsWith('.md') || statSync(resolved).isDirectory()) {
      broken.push(`${shown}: an anchor into a file that is not markdown`);
    } else if (!anchorsOf(target === '' ? text : readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor))) {
      broken.push(`${shown}: no heading "${anchor}" in ${relative(ROOT, resolved)}`);
    }
  }
  return broken;
}

describe('the links of the documentation', () => {
  it('reads the documents a newcomer follows', () => {
    expect(documents).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', 'docs/settings.md']));
  });

  it.each(documents)('%s: every relative link and anchor resolves', (document) => {
    expect(brokenLinks(document)).toEqual([]);
  });

  it('makes anchors as GitHub does', () => {
    expect(slug('Cross-site requests (CSRF)')).toBe('cross-site-requests-csrf');
    expect(slug('Metrics, traces and the status page')).toBe('metrics-traces-and-the-status-page');
    expect(slug('On a laptop: `deploy/compose.yaml`')).toBe('on-a-laptop-deploycomposeyaml');
    expect([...anchorsOf('# A\n\n```sh\n# not a heading\n```\n## A\n### b_c\n')]).toEqual(['a', 'a-1', 'b_c']);
  });

  it('finds a missing file, a missing anchor, and an anchor of the wrong file', () => {
    const text = [
      '# Here',
      '[fine](#here), [fine](docs/clients.md#errors), [fine](https://example.com/#x)',
      '[gone](docs/nowhere.md), [no heading](docs/clients.md#no-such-section), [not here](#errors)',
      '```md',
      '[in code](docs/nowhere.md)',
      '```',
    ].join('\n');
    expect(brokenLinks('README.md', text)).toEqual([
      'README.md: (docs/nowhere.md): no such file',
      'README.md: (docs/clients.md#no-such-section): no heading "no-such-section" in docs/clients.md',
      'README.md: (#errors): no heading "errors" in README.md',
    ]);
  });
});

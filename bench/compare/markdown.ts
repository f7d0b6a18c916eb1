/** Writing the compare section into docs/benchmarks.md between its markers, leaving the rest as it is. */

export const START = '<!-- compare:start -->';
export const END = '<!-- compare:end -->';

/**
 * Replaces what lies between the markers with `section`; without markers, appends them under a
 * "## Side by side" heading (adding the heading only if the document lacks it).
 */
export function replaceBetweenMarkers(doc: string, section: string): string {
  const block = `${START}\n${section.trim()}\n${END}`;
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start !== -1 && end > start) return doc.slice(0, start) + block + doc.slice(end + END.length);
  if (start !== -1 || end !== -1)
    throw new Error(`docs/benchmarks.md has one compare marker without the other: fix it by hand`);
  const heading = /^## Side by side[ \t]*$/m.exec(doc);
  if (heading) {
    const at = heading.index + heading[0].length;
    return `${doc.slice(0, at)}\n\n${block}\n${doc.slice(at).replace(/^\n+/, '\n')}`;
  }
  return `${doc.replace(/\n*$/, '')}\n\n## Side by side\n\n${block}\n`;
}

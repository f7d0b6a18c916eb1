/** Writing a benchmark's section into docs/benchmarks.md between its markers, leaving the rest as it is. */

export const START = '<!-- compare:start -->';
export const END = '<!-- compare:end -->';

/**
 * Replaces what lies between the markers with `section`; without markers, appends them under a
 * "## Side by side" heading (adding the heading only if the document lacks it).
 */
export function replaceBetweenMarkers(doc: string, section: string): string {
  return replaceSection(doc, { name: 'compare', start: START, end: END, heading: 'Side by side' }, section);
}

/** A section of docs/benchmarks.md a benchmark writes: its two markers and the heading it goes under. */
export interface SectionMarkers {
  name: string;
  start: string;
  end: string;
  heading: string;
}

/**
 * Replaces what lies between `markers.start` and `markers.end` with `section`; without them, puts
 * them under the `## heading` (appending the heading only if the document lacks it).
 */
export function replaceSection(doc: string, markers: SectionMarkers, section: string): string {
  const { start: open, end: close } = markers;
  const block = `${open}\n${section.trim()}\n${close}`;
  const start = doc.indexOf(open);
  const end = doc.indexOf(close);
  if (start !== -1 && end > start) return doc.slice(0, start) + block + doc.slice(end + close.length);
  if (start !== -1 || end !== -1)
    throw new Error(`docs/benchmarks.md has one ${markers.name} marker without the other: fix it by hand`);
  const heading = new RegExp(`^## ${markers.heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[ \t]*$`, 'm').exec(doc);
  if (heading) {
    const at = heading.index + heading[0].length;
    return `${doc.slice(0, at)}\n\n${block}\n${doc.slice(at).replace(/^\n+/, '\n')}`;
  }
  return `${doc.replace(/\n*$/, '')}\n\n## ${markers.heading}\n\n${block}\n`;
}

/** A scenario's part of the compare section, between markers of its own, so that a run of some scenarios replaces theirs alone. */
export function part(id: string, text: string): string {
  return `<!-- compare:part ${id} -->\n${text.trim()}\n<!-- compare:part-end ${id} -->`;
}

/**
 * For a run of some scenarios (`--only`): each of `parts` (made by `part`) replaces the part of
 * the same id in the compare section, or, new there, goes before the chart; everything else in the
 * section (other scenarios' parts, the header, the chart, the goals) stays as the last run left
 * it. Without a compare section yet, `whole` is written as a full run would.
 */
export function replaceParts(doc: string, parts: readonly { id: string; text: string }[], whole: string): string {
  const start = doc.indexOf(START);
  const end = doc.indexOf(END);
  if (start === -1 || end < start) return replaceBetweenMarkers(doc, whole);
  let block = doc.slice(start, end);
  for (const { id, text } of parts) {
    const open = `<!-- compare:part ${id} -->`;
    const close = `<!-- compare:part-end ${id} -->`;
    const from = block.indexOf(open);
    const to = block.indexOf(close);
    if (from !== -1 && to > from) {
      block = block.slice(0, from) + part(id, text) + block.slice(to + close.length);
      continue;
    }
    if (from !== -1 || to !== -1) throw new Error(`docs/benchmarks.md has one marker of part ${id} without the other`);
    const chart = block.indexOf('![');
    const at = chart === -1 ? block.length : chart;
    block = `${block.slice(0, at).replace(/\n*$/, '\n\n')}${part(id, text)}\n\n${block.slice(at).replace(/^\n+/, '')}`;
  }
  return doc.slice(0, start) + block.replace(/\n*$/, '\n') + doc.slice(end);
}

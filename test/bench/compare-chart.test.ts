import { describe, expect, it } from 'vitest';
import { chartSvg, compareChart, formatValue, type Panel } from '../../bench/compare/chart.ts';
import { emptyLoadCell, emptyResults, emptyWalkCell } from '../../bench/compare/results.ts';

/** The compare benchmark's SVG chart (docs/images/compare.svg), built from figures without running anything. */

const panel: Panel = {
  title: 'Calls <per> op',
  groups: [
    {
      label: 'S2',
      bars: [
        { system: 'ours', value: 4 },
        { system: 'naive', value: 25 },
        { system: 'Mesh', value: 24 },
      ],
    },
    {
      label: 'S3',
      bars: [
        { system: 'ours', value: 2 },
        { system: 'naive', value: 102 },
        { system: 'Mesh', value: 1 },
      ],
    },
  ],
};

/** Tags opened and never closed, or closed out of turn (a small well-formedness check: no XML parser here). */
function unbalancedTags(svg: string): string[] {
  const open: string[] = [];
  const wrong: string[] = [];
  for (const [, closing, name, selfClosing] of svg.matchAll(/<(\/?)([a-zA-Z]+)\b[^>]*?(\/?)>/g)) {
    if (selfClosing) continue;
    if (!closing) open.push(name!);
    else if (open.pop() !== name) wrong.push(`</${name}>`);
  }
  return [...wrong, ...open];
}

const bars = (svg: string) =>
  [...svg.matchAll(/<rect class="bar" data-system="([^"]*)" data-group="([^"]*)"[^>]*height="([\d.]+)"/g)].map((m) => ({
    system: m[1],
    group: m[2],
    height: Number(m[3]),
  }));

describe('compare chart', () => {
  it('is one well-formed svg element with every tag closed and text escaped', () => {
    const svg = chartSvg([panel], ['ours', 'naive', 'Mesh']);
    expect(svg.trim()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>[\s\S]*<\/svg>$/);
    expect(svg).toContain('Calls &lt;per&gt; op');
    expect(unbalancedTags(svg)).toEqual([]);
    expect(svg.replace(/<[^>]*>/g, '')).not.toMatch(/[<>]/);
  });

  it('draws one bar per system and scenario, each labelled with its number', () => {
    const svg = chartSvg([panel], ['ours', 'naive', 'Mesh']);
    expect(bars(svg).map((b) => `${b.group}/${b.system}`)).toEqual([
      'S2/ours',
      'S2/naive',
      'S2/Mesh',
      'S3/ours',
      'S3/naive',
      'S3/Mesh',
    ]);
    for (const n of ['>4<', '>25<', '>24<', '>2<', '>102<', '>1<']) expect(svg).toContain(n);
  });

  it('orders bar heights as the values (log scale), the largest the tallest', () => {
    const heights = bars(chartSvg([panel], ['ours', 'naive', 'Mesh'])).map((b) => b.height);
    expect(heights[4]).toBe(Math.max(...heights)); // 102
    expect(heights[5]!).toBeLessThan(heights[3]!); // 1 < 2
    expect(heights[1]!).toBeGreaterThan(heights[2]!); // 25 > 24
  });

  it('labels values shortly', () => {
    expect([formatValue(3005.4), formatValue(12.34), formatValue(1.74), formatValue(0), formatValue(0.5)]).toEqual([
      '3,005',
      '12.3',
      '1.74',
      '0',
      '0.5',
    ]);
  });

  it('charts a run: calls per scenario (S5 from the walk) and throughput, one bar per system that ran', () => {
    const r = emptyResults({ durationS: 10, warmupS: 3, s6Seconds: 150, s6Users: 50, s7Seconds: 150, s7Users: 50 });
    r.load.S1 = {
      ours: { ...emptyLoadCell(), coldCalls: [2], rps50: [3000] },
      ceiling: { ...emptyLoadCell(), coldCalls: [0], rps50: [4000] },
    };
    r.walk.ours = { ...emptyWalkCell(), calls: [27, 26, 28] };
    const found = bars(compareChart(r));
    expect(found.map((b) => `${b.group}/${b.system}`)).toEqual([
      'S1/ours',
      'S1/ceiling',
      'S5/ours',
      'S1/ours',
      'S1/ceiling',
    ]);
    expect(compareChart(r)).toContain('>27<'); // the median of the walk's runs
  });
});

import { median } from '../lib.ts';
import type { Results } from './results.ts';
import { SYSTEM_LABELS, type SystemName } from './systems.ts';

/**
 * The compare run's chart, as hand-written SVG (no dependency): grouped bars, one group per
 * scenario and one bar per system, on a log scale (calls and throughput span four orders of
 * magnitude), each bar labelled with its value.
 */

export interface Bar {
  system: string;
  value: number;
}

export interface Panel {
  title: string;
  groups: { label: string; bars: Bar[] }[];
}

const COLORS = ['#1f77b4', '#aec7e8', '#ff7f0e', '#2ca02c', '#9467bd', '#7f7f7f'];
const WIDTH = 900;
const PANEL_HEIGHT = 260;
const TOP = 40;
const BOTTOM = 30;
const LEFT = 20;

const escape = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Short labels: 3 significant figures at most, whole numbers from 100 up. */
export function formatValue(v: number): string {
  if (v >= 100) return Math.round(v).toLocaleString('en-US');
  if (v >= 10) return v.toFixed(1).replace(/\.0$/, '');
  return v.toFixed(2).replace(/\.?0+$/, '') || '0';
}

function panelSvg(panel: Panel, systems: readonly string[], y0: number): string {
  const max = Math.max(1, ...panel.groups.flatMap((g) => g.bars.map((b) => b.value)));
  const plotHeight = PANEL_HEIGHT - TOP - BOTTOM;
  const scale = (v: number) => (Math.log10(1 + Math.max(0, v)) / Math.log10(1 + max)) * plotHeight;
  const groupWidth = (WIDTH - LEFT * 2) / Math.max(1, panel.groups.length);
  const barWidth = Math.min(40, (groupWidth - 20) / Math.max(1, systems.length));
  const parts = [`<text x="${LEFT}" y="${y0 + 20}" font-size="15" font-weight="bold">${escape(panel.title)}</text>`];
  const base = y0 + PANEL_HEIGHT - BOTTOM;
  parts.push(`<line x1="${LEFT}" y1="${base}" x2="${WIDTH - LEFT}" y2="${base}" stroke="#333"/>`);
  panel.groups.forEach((group, gi) => {
    const gx = LEFT + gi * groupWidth + (groupWidth - barWidth * group.bars.length) / 2;
    group.bars.forEach((bar, bi) => {
      const h = scale(bar.value);
      const x = gx + bi * barWidth;
      const color = COLORS[systems.indexOf(bar.system) % COLORS.length];
      parts.push(
        `<rect class="bar" data-system="${escape(bar.system)}" data-group="${escape(group.label)}" x="${x.toFixed(1)}" y="${(base - h).toFixed(1)}" width="${(barWidth - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${color}"><title>${escape(`${group.label}, ${bar.system}: ${formatValue(bar.value)}`)}</title></rect>`,
        `<text x="${(x + (barWidth - 2) / 2).toFixed(1)}" y="${(base - h - 3).toFixed(1)}" font-size="10" text-anchor="middle">${formatValue(bar.value)}</text>`,
      );
    });
    parts.push(
      `<text x="${(LEFT + gi * groupWidth + groupWidth / 2).toFixed(1)}" y="${base + 18}" font-size="13" text-anchor="middle">${escape(group.label)}</text>`,
    );
  });
  return parts.join('\n');
}

/** Panels stacked, a legend of the systems on top. */
export function chartSvg(panels: readonly Panel[], systems: readonly string[]): string {
  const legendHeight = 30;
  const height = legendHeight + panels.length * PANEL_HEIGHT;
  // Each entry as wide as its label (about 7 px a character at 12 px) and a gap.
  let x = LEFT;
  const legend = systems.map((s, i) => {
    const entry = `<rect x="${x}" y="8" width="12" height="12" fill="${COLORS[i % COLORS.length]}"/><text x="${x + 16}" y="19" font-size="12">${escape(s)}</text>`;
    x += 16 + s.length * 7 + 20;
    return entry;
  });
  const body = panels.map((p, i) => panelSvg(p, systems, legendHeight + i * PANEL_HEIGHT));
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...legend,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

/** The two panels of a compare run: upstream calls per operation (cold), and req/s at 50 connections. */
export function compareChart(r: Results): string {
  const systems = new Set<SystemName>();
  const bars = (pick: (system: SystemName, scenario: string) => number[] | undefined, scenarios: string[]) =>
    scenarios.map((scenario) => ({
      label: scenario,
      bars: (Object.keys(SYSTEM_LABELS) as SystemName[]).flatMap((system) => {
        const values = pick(system, scenario);
        if (!values?.length) return [];
        systems.add(system);
        return [{ system: SYSTEM_LABELS[system], value: median(values) }];
      }),
    }));
  const loadIds = Object.keys(r.load);
  const calls = bars(
    (system, scenario) => (scenario === 'S5' ? r.walk[system]?.calls : r.load[scenario]?.[system]?.coldCalls),
    [...loadIds, ...(Object.keys(r.walk).length ? ['S5'] : [])],
  );
  const throughput = bars((system, scenario) => r.load[scenario]?.[system]?.rps50, loadIds);
  const labels = [...systems].map((s) => SYSTEM_LABELS[s]);
  return chartSvg(
    [
      { title: 'Upstream calls per operation, cold (S5: the whole walk); log scale, fewer is better', groups: calls },
      { title: 'Throughput, req/s at 50 connections; log scale, more is better', groups: throughput },
    ],
    labels,
  );
}

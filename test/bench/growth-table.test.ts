import { describe, expect, it } from 'vitest';
import { growthExponent, growthTable, shapeCell, shapeOf } from '../../bench/compare/growth-table.ts';
import { addBenchLicensees, benchEvent, benchKey, benchLicensee } from '../../bench/compare/licensees-emulator.ts';
import { replaceSection } from '../../bench/compare/markdown.ts';
import { EmulatorState } from '../../src/emulator/state.ts';

describe('the shape of a growth curve', () => {
  it('is the exponent between the first and the last point', () => {
    expect(growthExponent([1, 10, 100], [5, 5, 5])).toBe(0);
    expect(growthExponent([1, 10, 100], [2, 20, 200])).toBeCloseTo(1);
    expect(growthExponent([1, 10, 100], [1, 100, 10_000])).toBeCloseTo(2);
    expect(growthExponent([100, 1000, 10_000], [90, 91, 90])).toBeCloseTo(0);
  });

  it('names it flat, sub-linear, linear or worse than linear', () => {
    expect(shapeOf(-0.1)).toBe('flat');
    expect(shapeOf(0.1)).toBe('flat');
    expect(shapeOf(0.5)).toBe('sub-linear');
    expect(shapeOf(0.9)).toBe('linear');
    expect(shapeOf(1.1)).toBe('linear');
    expect(shapeOf(1.5)).toBe('worse than linear');
  });

  it('names none when an end is at zero or below, rather than divide by it', () => {
    expect(growthExponent([1, 100], [0, 3])).toBeUndefined();
    expect(growthExponent([1, 100], [-2, 3])).toBeUndefined();
    expect(shapeCell({ inputs: [1, 100], figures: [0, 3] })).toBe('n/a (a figure at 0)');
  });

  it('takes the shape of an RSS from the part the input adds, not from the whole', () => {
    // 100 MiB at ready: the whole grows 110 → 200 (k 0.13, "flat"); what the input adds, 10 → 100, is linear.
    const row = { inputs: [1, 10], figures: [110, 200], added: [10, 100] };
    expect(shapeCell(row)).toBe('linear (k 1.00)');
  });

  it('prints a row per figure with its load average', () => {
    const table = growthTable([
      {
        series: 'licensees (1 / 100)',
        figure: 'RSS (MiB; + beyond ready)',
        inputs: [1, 100],
        figures: [110, 200],
        added: [10, 100],
        digits: 0,
        why: 'per licensee state',
        load: [1.5, 2.25],
      },
    ]);
    expect(table.split('\n')).toEqual([
      '| series | figure | at each input | shape (figure ∝ input^k) | why | load average |',
      '|---|---|---|---|---|---|',
      '| licensees (1 / 100) | RSS (MiB; + beyond ready) | 110 (+10) / 200 (+100) | sub-linear (k 0.50) | per licensee state | 1.50 → 2.25 |',
    ]);
  });
});

describe('a section of its own in docs/benchmarks.md', () => {
  const markers = {
    name: 'growth',
    start: '<!-- growth:start -->',
    end: '<!-- growth:end -->',
    heading: 'How cost grows',
  };

  it('is appended under its heading, then replaced in place', () => {
    const first = replaceSection('# Benchmarks\n\nintro\n', markers, 'old');
    expect(first).toBe(
      '# Benchmarks\n\nintro\n\n## How cost grows\n\n<!-- growth:start -->\nold\n<!-- growth:end -->\n',
    );
    const doc = `${first}\n## Later\n\nkept\n`;
    const second = replaceSection(doc, markers, 'new');
    expect(second).toBe(doc.replace('old', 'new'));
  });

  it('refuses a document with one marker alone', () => {
    expect(() => replaceSection('# B\n<!-- growth:end -->\n', markers, 'x')).toThrow(/one growth marker/);
  });
});

describe('the emulator with licensees of the benchmark', () => {
  it('gives each licensee its own key and its own copy of event 5002, with reservation numbers of its own', () => {
    const state = new EmulatorState({
      seed: 1,
      startMs: Date.parse('2027-01-15T12:00:00Z'),
      rateLimit: false,
      rateWindowMs: 60_000,
    });
    addBenchLicensees(state.store, 3);
    const numbers = new Set<number>();
    for (const i of [1, 2, 3]) {
      expect(state.store.licensees.get(benchLicensee(i))?.key).toBe(benchKey(i));
      expect(state.store.eventOf(benchLicensee(i), benchEvent(i))?.licensee).toBe(benchLicensee(i));
      // Another licensee's copy is not its own.
      expect(state.store.eventOf(benchLicensee(i), benchEvent((i % 3) + 1))).toBeUndefined();
      const reservations = state.store.reservationsByEvent.get(benchEvent(i))!;
      expect(reservations).toHaveLength(1000);
      expect(state.store.hotelsByEvent.get(benchEvent(i))).toHaveLength(4);
      for (const r of reservations) {
        expect(r.eventId).toBe(benchEvent(i));
        expect(state.store.reservationOf(benchLicensee(i), r.reservationNumber)).toBe(r);
        numbers.add(r.reservationNumber);
      }
    }
    expect(numbers.size).toBe(3000);
    // The demo data's own event is left as it was.
    expect(state.store.reservationsByEvent.get(5002)![0]!.eventId).toBe(5002);
  });
});

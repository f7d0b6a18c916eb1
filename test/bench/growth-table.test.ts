import { describe, expect, it } from 'vitest';
import { growthOf, growthTable, shapeCell } from '../../bench/compare/growth-table.ts';
import { addBenchLicensees, benchEvent, benchKey, benchLicensee } from '../../bench/compare/licensees-emulator.ts';
import { replaceSection } from '../../bench/compare/markdown.ts';
import { EmulatorState } from '../../src/emulator/state.ts';

describe('the shape of a growth curve', () => {
  const inputs = [1, 10, 100];

  it('is flat while the figure at the largest input stays within 25 % of the smallest, falling included', () => {
    expect(growthOf(inputs, [90, 91, 90])).toEqual({ shape: 'flat' });
    expect(growthOf(inputs, [80, 66, 30])).toEqual({ shape: 'flat' });
    expect(growthOf(inputs, [100, 110, 124])).toEqual({ shape: 'flat' });
  });

  it('is linear when one more unit costs about the same at both ends, however large the constant part', () => {
    expect(growthOf(inputs, [2, 20, 200])).toEqual({ shape: 'linear', slopeRatio: 1 });
    expect(growthOf(inputs, [1010, 1100, 2000])).toMatchObject({ shape: 'linear' });
    // S5's calls: a page read ahead at 1,000 records, one per page after.
    expect(growthOf([1000, 10_000, 25_600], [2, 13, 27]).shape).toBe('linear');
  });

  it('is worse than linear when the last segment costs more per unit, sub-linear when less', () => {
    expect(growthOf(inputs, [1, 100, 10_000])).toMatchObject({ shape: 'worse than linear' });
    expect(growthOf(inputs, [1, Math.sqrt(10), 10])).toMatchObject({ shape: 'sub-linear' });
    expect(growthOf(inputs, [10, 9, 50])).toEqual({ shape: 'worse than linear' });
  });

  it('needs three points to name one', () => {
    expect(shapeCell({ inputs: [1, 100], figures: [1, 3] })).toBe('n/a (three points needed)');
  });

  it('takes the shape of an RSS from the part the input adds, not from the whole', () => {
    // 100 MiB at ready, noisy: the whole falls then rises (230, 146, 399); what the input adds is linear.
    const row = { inputs: [100, 1000, 10_000], figures: [230, 146, 399], added: [2, 20, 200] };
    expect(shapeCell(row)).toBe('linear (slope ×1.00)');
    expect(shapeCell({ ...row, added: undefined })).toBe('worse than linear');
  });

  it('prints a row per figure with its load average', () => {
    const table = growthTable([
      {
        series: 'licensees (1 / 10 / 100)',
        figure: 'RSS (MiB; + beyond ready)',
        inputs: [1, 10, 100],
        figures: [110, 120, 400],
        added: [10, 20, 300],
        digits: 0,
        why: 'per licensee state',
        load: [1.5, 2.25],
      },
    ]);
    expect(table.split('\n')).toEqual([
      "| series | figure | at each input | shape (last segment's slope over the first's) | why | load average |",
      '|---|---|---|---|---|---|',
      '| licensees (1 / 10 / 100) | RSS (MiB; + beyond ready) | 110 (+10) / 120 (+20) / 400 (+300) | worse than linear (slope ×2.80) | per licensee state | 1.50 → 2.25 |',
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

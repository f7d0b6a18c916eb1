/**
 * The "How cost grows" table of bench/growth.ts: each figure of a series at its three inputs, and
 * the shape of the curve computed from them.
 */

export type Shape = 'flat' | 'sub-linear' | 'linear' | 'worse than linear';

/**
 * The exponent k of `figure ∝ input^k` between the first and the last point (ln of the figure's
 * ratio over ln of the input's): 0 is flat, 1 linear, 2 quadratic. Undefined when either end is not
 * above zero (a ratio of nothing says nothing).
 */
export function growthExponent(inputs: readonly number[], figures: readonly number[]): number | undefined {
  const x0 = inputs[0]!;
  const x1 = inputs.at(-1)!;
  const y0 = figures[0]!;
  const y1 = figures.at(-1)!;
  if (!(y0 > 0 && y1 > 0 && x1 > x0 && x0 > 0)) return undefined;
  return Math.log(y1 / y0) / Math.log(x1 / x0);
}

/** The exponent named: below 0.15 flat, up to 0.85 sub-linear, up to 1.15 linear, above worse than linear. */
export function shapeOf(exponent: number): Shape {
  if (exponent < 0.15) return 'flat';
  if (exponent < 0.85) return 'sub-linear';
  if (exponent <= 1.15) return 'linear';
  return 'worse than linear';
}

export interface GrowthRow {
  /** The series, e.g. "licensees (1 / 10 / 100)". */
  series: string;
  figure: string;
  inputs: readonly number[];
  /** The figure at each input, as shown. */
  figures: readonly number[];
  /**
   * The part of each figure the input adds (RSS beyond the gateway's at ready, say): shown beside
   * it, and the shape is computed from it rather than from `figures`.
   */
  added?: readonly number[];
  digits: number;
  why: string;
  /** Load average (1 min) at the start and the end of the series. */
  load: readonly [number, number];
}

/** The table's shape cell: the shape and the exponent it was named from, or why none. */
export function shapeCell(row: Pick<GrowthRow, 'inputs' | 'figures' | 'added'>): string {
  const k = growthExponent(row.inputs, row.added ?? row.figures);
  return k === undefined ? 'n/a (a figure at 0)' : `${shapeOf(k)} (k ${k.toFixed(2)})`;
}

export function growthTable(rows: readonly GrowthRow[]): string {
  const head = '| series | figure | at each input | shape (figure ∝ input^k) | why | load average |';
  const cells = rows.map((r) =>
    [
      r.series,
      r.figure,
      r.figures
        .map((f, i) => (r.added ? `${f.toFixed(r.digits)} (+${r.added[i]!.toFixed(r.digits)})` : f.toFixed(r.digits)))
        .join(' / '),
      shapeCell(r),
      r.why,
      `${r.load[0].toFixed(2)} → ${r.load[1].toFixed(2)}`,
    ].join(' | '),
  );
  return [head, '|---|---|---|---|---|---|', ...cells.map((c) => `| ${c} |`)].join('\n');
}

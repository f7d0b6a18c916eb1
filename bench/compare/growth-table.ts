/**
 * The "How cost grows" table of bench/growth.ts: each figure of a series at its three inputs, and
 * the shape of the curve computed from them (growthOf).
 */

export type Shape = 'flat' | 'sub-linear' | 'linear' | 'worse than linear';

/** How a figure grew over three (or more) inputs: its shape, and the ratio it was named from. */
export interface Growth {
  shape: Shape;
  /**
   * The slope of the last segment over the first's (what one more unit of input costs at the large
   * end against the small one); undefined when flat, or when the first segment fell.
   */
  slopeRatio?: number;
}

/**
 * The shape of a curve from its points (inputs ascending, log-spaced as the 1 / 10 / 100):
 * flat when the figure at the largest input is at most 25 % above the smallest's (falling
 * included); otherwise by the marginal cost, the slope of the last segment over the first's:
 * about the same (0.5 to 2) is linear, however large the constant part; more is worse than linear
 * (x² over 1 / 10 / 100 gives 10); less is sub-linear (√x gives 0.3). A first segment that fell
 * while the whole rose puts all the growth past the middle point: worse than linear.
 */
export function growthOf(inputs: readonly number[], figures: readonly number[]): Growth {
  const [x1, x2, x3] = [inputs[0]!, inputs.at(-2)!, inputs.at(-1)!];
  const [y1, y2, y3] = [figures[0]!, figures.at(-2)!, figures.at(-1)!];
  if (y3 <= y1 + 0.25 * Math.abs(y1)) return { shape: 'flat' };
  const first = (y2 - y1) / (x2 - x1);
  const last = (y3 - y2) / (x3 - x2);
  if (!(first > 0)) return { shape: 'worse than linear' };
  const slopeRatio = last / first;
  const shape = slopeRatio > 2 ? 'worse than linear' : slopeRatio < 0.5 ? 'sub-linear' : 'linear';
  return { shape, slopeRatio };
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
   * it, and the shape is computed from it rather than from `figures` (noise in a large constant
   * part would otherwise read as growth).
   */
  added?: readonly number[];
  digits: number;
  why: string;
  /** Load average (1 min) at the start and the end of the series. */
  load: readonly [number, number];
}

/** The table's shape cell: the shape and the slope ratio it was named from. */
export function shapeCell(row: Pick<GrowthRow, 'inputs' | 'figures' | 'added'>): string {
  if (row.inputs.length < 3) return 'n/a (three points needed)';
  const { shape, slopeRatio } = growthOf(row.inputs, row.added ?? row.figures);
  return slopeRatio === undefined ? shape : `${shape} (slope ×${slopeRatio.toFixed(2)})`;
}

export function growthTable(rows: readonly GrowthRow[]): string {
  const head =
    "| series | figure | at each input | shape (last segment's slope over the first's) | why | load average |";
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

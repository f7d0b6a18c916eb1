/** One sample of a metric in Prometheus' text format: its labels and value. */
export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** The samples of metric `name` in a /metrics page's text. */
export function samples(text: string, name: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .map((line) => {
      const [, labelText = '', value] = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line)!;
      const labels = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
      return { labels, value: Number(value) };
    });
}

/** Each sample of `operations` as `[operation, type, outcome, value]`, as the operation tests compare them. */
export const operationCounts = (operations: Sample[]) =>
  operations.map(({ labels, value }) => [labels.operation, labels.type, labels.outcome, value]);

/** The status page's chart: each licensee's budget use, sampled, over the last 15 minutes. */
export const HISTORY_SPAN_MS = 15 * 60_000;

export interface BudgetSample {
  at: number;
  used: number;
}

/**
 * Samples of the budget used per licensee, at least `everyMs` apart (a timer samples, and so does
 * each look at the status page, so a chart opened during a burst shows it), none older than 15 min.
 */
export class BudgetHistory {
  private readonly samples = new Map<string, BudgetSample[]>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly licensees: readonly string[],
    private readonly used: (licensee: string) => Promise<number>,
    private readonly options: { everyMs: number; now?: () => number } = { everyMs: 10_000 },
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.sample(), this.options.everyMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Takes a sample of every licensee, unless one was taken less than a second ago. */
  async sample(): Promise<void> {
    const now = (this.options.now ?? Date.now)();
    for (const licensee of this.licensees) {
      const kept = (this.samples.get(licensee) ?? []).filter((sample) => sample.at > now - HISTORY_SPAN_MS);
      if ((kept.at(-1)?.at ?? -Infinity) > now - 1000) {
        this.samples.set(licensee, kept);
        continue;
      }
      kept.push({ at: now, used: await this.used(licensee) });
      this.samples.set(licensee, kept);
    }
  }

  of(licensee: string): readonly BudgetSample[] {
    return this.samples.get(licensee) ?? [];
  }
}

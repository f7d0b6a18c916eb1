type Logger = { warn(details: object, message: string): void; info(details: object, message: string): void };

/**
 * A store's loss logged once and its return once, however often it is tried meanwhile: a poll of
 * Redis each second would otherwise log every try (a warning with a stack each second per replica
 * while Redis is away). The lost line names the first failure's message only, as the budget's does:
 * every failure of an outage has the same stack, inside ioredis.
 */
export class OutageLog {
  private away = false;

  constructor(
    private readonly logger: Logger | undefined,
    private readonly messages: { lost: string; back: string },
  ) {}

  /** A try failed: logged when it is the first of an outage. */
  failed(error: unknown, details: object = {}): void {
    if (this.away) return;
    this.away = true;
    this.logger?.warn(
      { ...details, error: error instanceof Error ? error.message : String(error) },
      this.messages.lost,
    );
  }

  /** A try succeeded: logged when it ends an outage. */
  answered(): void {
    if (!this.away) return;
    this.away = false;
    this.logger?.info({}, this.messages.back);
  }
}

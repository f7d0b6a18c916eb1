import { type DocumentNode, type ExecutionArgs, type ExecutionResult, getOperationAST, Kind } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { audienceOf } from '../auth/principal.ts';
import type { GatewayContext } from '../resolvers/context.ts';
import { writtenFromKeptJson } from './kept-json.ts';
import { stableJson } from './stable-json.ts';
import { markedStale } from './stale-marks.ts';

/**
 * One execution per change for every subscriber of the same operation (docs/architecture.md,
 * "Shared subscriptions"). Subscribers whose operations are the same (document, operation name,
 * variables, and what decides the answer: the licensee, the client's scopes, whether it asked for
 * fresh reads) form a group: the group subscribes once, in a context of its own, runs the
 * selection once for each change and hands the same payload to each subscriber, marked to be
 * written from its data's JSON serialised once (kept-json.ts). A subscriber holds only its place
 * in the group's stream: what it has not read yet.
 *
 * Everything that holds per operation still runs per subscriber, around this: authentication,
 * scopes, limits, cost, trusted documents, the subscription cap and the credential's expiry in
 * `onSubscribe` before it joins, and masking, stale marks, audit and metrics on each payload it
 * receives. A subscriber joins a group's stream where it stands, which is what a subscription
 * that begins now receives. Not shared, each in a group of its own: a subscription that replays
 * history for its subscriber (an argument its field names in `extensions.replayArguments`, such as
 * `since`, given), and one whose context follows its own position (a router callback's
 * `changeCursor`).
 */
export class SharedSubscriptions {
  readonly #groups = new Map<string, Group>();
  /** A number per parsed document (Yoga's parse cache hands the same one for the same text). */
  readonly #documentIds = new WeakMap<DocumentNode, number>();
  #documents = 0;
  #alone = 0;

  constructor(
    private readonly options: {
      /** The context a shared group's one execution runs in, made from its first subscriber's. */
      contextFor: (first: GatewayContext) => GatewayContext;
      /** Told of each payload an execution produced, shared or not (metrics, tests). */
      onExecuted?: () => void;
    },
  ) {}

  /** Executions running now (shared or alone). */
  get executions(): number {
    return this.#groups.size;
  }

  /** Subscribers of the executions running now. */
  get subscribers(): number {
    let count = 0;
    for (const group of this.#groups.values()) count += group.size;
    return count;
  }

  plugin(): Plugin {
    return {
      onSubscribe: ({ args, subscribeFn, setSubscribeFn }) => {
        const key = this.#keyOf(args);
        const alone = key === undefined;
        setSubscribeFn((subscribeArgs) => {
          const groupKey = key ?? `alone:${++this.#alone}`;
          let group = this.#groups.get(groupKey);
          if (!group) {
            const contextValue = alone
              ? subscribeArgs.contextValue
              : this.options.contextFor(subscribeArgs.contextValue as GatewayContext);
            group = new Group(
              () => subscribeFn({ ...subscribeArgs, contextValue }),
              contextValue as GatewayContext,
              () => {
                if (this.#groups.get(groupKey) === group) this.#groups.delete(groupKey);
              },
              this.options.onExecuted,
            );
            this.#groups.set(groupKey, group);
          }
          return group.join();
        });
      },
    };
  }

  /** What decides a subscription's payloads; undefined when it must not be shared. */
  #keyOf(args: ExecutionArgs): string | undefined {
    const context = args.contextValue as GatewayContext;
    if (context.changeCursor) return undefined;
    const operation = getOperationAST(args.document, args.operationName);
    if (operation?.operation !== 'subscription') return undefined;
    const variables = (args.variableValues ?? {}) as Record<string, unknown>;
    const fields = args.schema.getSubscriptionType()?.getFields();
    for (const selection of operation.selectionSet.selections) {
      // Root fields reached through fragments are rare in a subscription: such documents run alone.
      if (selection.kind !== Kind.FIELD) return undefined;
      const replaying = (fields?.[selection.name.value]?.extensions?.replayArguments ?? []) as readonly string[];
      for (const argument of selection.arguments ?? []) {
        if (!replaying.includes(argument.name.value)) continue;
        const { value } = argument;
        if (value.kind === Kind.NULL) continue;
        if (value.kind === Kind.VARIABLE && variables[value.name.value] == null) continue;
        return undefined;
      }
    }
    let document = this.#documentIds.get(args.document);
    if (document === undefined) this.#documentIds.set(args.document, (document = ++this.#documents));
    const fresh = context.freshReads === true ? 'fresh' : '';
    return `${document}|${args.operationName ?? ''}|${audienceOf(context.principal)}|${fresh}|${stableJson(variables)}`;
  }
}

type Outcome = AsyncIterableIterator<ExecutionResult> | ExecutionResult;

/** One execution of a subscription and the subscribers it feeds. */
class Group {
  readonly #subscribers = new Set<Subscriber>();
  readonly #opened: Promise<ExecutionResult | undefined>;
  #source: AsyncIterator<ExecutionResult> | undefined;
  #over = false;

  constructor(
    subscribe: () => Outcome | Promise<Outcome>,
    private readonly context: GatewayContext,
    private readonly forget: () => void,
    private readonly onExecuted: (() => void) | undefined,
  ) {
    this.#opened = Promise.resolve()
      .then(subscribe)
      .then(
        (outcome) => {
          if (!isAsyncIterable(outcome)) {
            // Refused when it began (an unknown argument value...): each who joined meanwhile gets the same answer.
            this.#end();
            return outcome;
          }
          this.#source = outcome[Symbol.asyncIterator]();
          if (this.#over) void this.#source.return?.();
          else void this.#pump(this.#source);
          return undefined;
        },
        (error: unknown) => {
          this.#end();
          throw error;
        },
      );
  }

  get size(): number {
    return this.#subscribers.size;
  }

  /** A new subscriber's stream, from the group's next payload on (or the group's refusal). */
  join(): Promise<Outcome> {
    const subscriber = new Subscriber(this);
    this.#subscribers.add(subscriber);
    return this.#opened.then((refusal) => refusal ?? subscriber);
  }

  /** A subscriber left: the last one to leave ends the execution (its source leaves the feed). */
  leave(subscriber: Subscriber): void {
    if (!this.#subscribers.delete(subscriber) || this.#subscribers.size > 0 || this.#over) return;
    this.#end();
    void this.#source?.return?.()?.catch(() => undefined);
  }

  async #pump(source: AsyncIterator<ExecutionResult>): Promise<void> {
    try {
      for (;;) {
        const next = await source.next();
        if (next.done || this.#over) break;
        this.onExecuted?.();
        // The group's own reads (none of any subscriber's) decide the payload's stale marks.
        const payload = writtenFromKeptJson(markedStale(next.value, this.context.calls));
        for (const subscriber of this.#subscribers) subscriber.push(payload);
      }
      for (const subscriber of this.#subscribers) subscriber.finish();
    } catch (error) {
      for (const subscriber of this.#subscribers) subscriber.fail(error);
    }
    this.#end();
  }

  #end(): void {
    this.#over = true;
    this.forget();
  }
}

/** A subscriber's place in its group's stream: the payloads it has not read yet. */
class Subscriber implements AsyncIterableIterator<ExecutionResult> {
  #unread: ExecutionResult[] | undefined;
  #waiting: { resolve: (next: IteratorResult<ExecutionResult>) => void; reject: (error: unknown) => void } | undefined;
  #finished = false;
  #failure: { error: unknown } | undefined;

  constructor(private readonly group: Group) {}

  push(payload: ExecutionResult): void {
    if (this.#finished) return;
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = undefined;
      waiting.resolve({ value: payload, done: false });
    } else (this.#unread ??= []).push(payload);
  }

  /** Nothing more comes: the stream ends once what is unread has been read. */
  finish(): void {
    this.#finished = true;
    this.#waiting?.resolve({ value: undefined, done: true });
    this.#waiting = undefined;
  }

  /** The execution failed: the stream throws once what is unread has been read. */
  fail(error: unknown): void {
    this.#failure = { error };
    this.#finished = true;
    this.#waiting?.reject(error);
    this.#waiting = undefined;
  }

  next(): Promise<IteratorResult<ExecutionResult>> {
    const unread = this.#unread?.shift();
    if (unread) return Promise.resolve({ value: unread, done: false });
    if (this.#failure) {
      const { error } = this.#failure;
      this.#failure = undefined;
      return Promise.reject(error);
    }
    if (this.#finished) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.#waiting = { resolve, reject }));
  }

  return(): Promise<IteratorResult<ExecutionResult>> {
    this.#unread = undefined;
    this.finish();
    this.group.leave(this);
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<ExecutionResult>> {
    this.return();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

function isAsyncIterable(value: unknown): value is AsyncIterable<ExecutionResult> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

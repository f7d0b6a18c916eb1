import { availableParallelism, totalmem } from 'node:os';
import { type DocumentNode, GraphQLError, Kind, visit } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { ErrorCode } from '../error-codes.ts';

/**
 * A window of more records than this makes an operation large: its result is megabytes of objects
 * (1000 reservations with contact, rooms and guests are about 5 MB on the heap before they are
 * serialized).
 */
export const LARGE_WINDOW = 200;

/**
 * What one record of a large operation holds while the operation runs: its share of the upstream
 * page (about 1 KB of JSON, three to four times that once parsed and decoded), its result objects
 * (about 5 KB) and its serialised answer (1–2 KB). An estimate on the high side: an operation that
 * holds less only waits a little sooner than it must.
 */
export const BYTES_PER_RECORD = 10 * 1024;

export interface AdmissionSettings {
  /** Large operations running at once: they are bound by CPU. */
  permits: number;
  /** The bytes all running large operations may hold together (MAX_INFLIGHT_BYTES). */
  maxBytes: number;
  /** How long a large operation may wait for its turn before it is refused (MAX_INFLIGHT_WAIT_MS). */
  maxWaitMs: number;
}

/**
 * The memory large operations may hold by default: an eighth of the container's memory limit
 * (cgroup `memory.max`, as Node reads it), or of the machine's memory when there is none. The rest
 * is the process itself (about 100 MiB), the caches, and garbage V8 has not collected yet, which
 * is most of a peak (docs/benchmarks.md).
 */
export function defaultMaxInflightBytes(): number {
  const machine = totalmem();
  const constrained = process.constrainedMemory?.() ?? 0;
  const memory = constrained > 0 && constrained < machine ? constrained : machine;
  return Math.max(32 * 1024 * 1024, Math.floor(memory / 8));
}

/**
 * Large operations are admitted by count and by the bytes they will hold. A few run at a time
 * (twice the cores): they are bound by CPU, so running fifty at once finishes none sooner, and holds
 * fifty results in memory at once (850 MiB peak at 50 connections on 1000-record pages:
 * docs/benchmarks.md). Each also reserves its estimated bytes (its windows × BYTES_PER_RECORD, at
 * most the whole bound) against `maxBytes`. The others wait in arrival order; one still waiting
 * after `maxWaitMs` is answered `OVERLOADED` with `retryAfterSeconds`, never run into an
 * out-of-memory crash. Small operations, which mostly wait on the service, are never held back.
 */
export function useLargeResultBulkhead(
  settings: Partial<AdmissionSettings> = {},
  onAdmission?: (admission: Admission) => void,
): Plugin {
  const admission = new Admission({
    permits: settings.permits ?? 2 * availableParallelism(),
    maxBytes: settings.maxBytes ?? defaultMaxInflightBytes(),
    maxWaitMs: settings.maxWaitMs ?? 10_000,
  });
  onAdmission?.(admission);
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const variables = (args.variableValues ?? {}) as Record<string, unknown>;
      const windows = windowsOf(args.document, variables);
      if (windows.largest <= LARGE_WINDOW) return;
      setExecuteFn(async (executionArgs) => {
        const signal = (executionArgs.contextValue as { request?: Request } | undefined)?.request?.signal;
        const entry = await admission.enter(windows.total * BYTES_PER_RECORD, signal);
        if ('retryAfterSeconds' in entry) {
          return {
            errors: [
              new GraphQLError(
                `the gateway is busy with other large operations; retry after ${entry.retryAfterSeconds} s`,
                { extensions: { code: ErrorCode.OVERLOADED, retryAfterSeconds: entry.retryAfterSeconds } },
              ),
            ],
          };
        }
        const { release } = entry;
        try {
          const result = await executeFn(executionArgs);
          if (!isAsyncIterable(result)) {
            release();
            // Its result is built: the pages its reads decoded are not held while it waits to be written.
            (executionArgs.contextValue as { calls?: { letGo?: () => void } } | undefined)?.calls?.letGo?.();
            return result;
          }
          // A streamed result holds its reservation until the last part is sent or the client leaves.
          signal?.addEventListener('abort', release, { once: true });
          return releasingAtEnd(result, release);
        } catch (error) {
          release();
          throw error;
        }
      });
    },
  };
}

/** Whether the document asks for a window of more than LARGE_WINDOW records (its variables read). */
export function isLarge(document: DocumentNode, variables: Record<string, unknown>): boolean {
  return largestWindow(document, variables) > LARGE_WINDOW;
}

/** The largest `first` or `last` the document asks for, its variables read. */
export function largestWindow(document: DocumentNode, variables: Record<string, unknown>): number {
  return windowsOf(document, variables).largest;
}

/**
 * The largest `first` or `last` of a document and their sum (each argument once: a window nested
 * in a list is counted once, so the sum is a floor for such documents; the cost limit bounds them).
 */
export function windowsOf(
  document: DocumentNode,
  variables: Record<string, unknown>,
): { largest: number; total: number } {
  const { literals, variableNames } = windowArguments(document);
  let largest = 0;
  let total = 0;
  const count = (value: unknown) => {
    if (typeof value !== 'number' || !(value > 0)) return;
    total += value;
    if (value > largest) largest = value;
  };
  for (const value of literals) count(value);
  for (const name of variableNames) count(variables[name]);
  return { largest, total };
}

interface WindowArguments {
  /** Each `first`/`last` written as a number. */
  literals: number[];
  /** The variable of each `first`/`last` given by one (once per argument: a variable used twice counts twice). */
  variableNames: string[];
}

/** Per document: a document is parsed once and kept (Yoga's parse cache), so it is walked once, not per request. */
const windowArgumentsOf = new WeakMap<DocumentNode, WindowArguments>();

function windowArguments(document: DocumentNode): WindowArguments {
  let found = windowArgumentsOf.get(document);
  if (found) return found;
  found = { literals: [], variableNames: [] };
  const { literals, variableNames } = found;
  visit(document, {
    Argument(node) {
      if (node.name.value !== 'first' && node.name.value !== 'last') return;
      if (node.value.kind === Kind.VARIABLE) variableNames.push(node.value.name.value);
      else if (node.value.kind === Kind.INT) literals.push(Number(node.value.value));
    },
  });
  windowArgumentsOf.set(document, found);
  return found;
}

interface Waiter {
  bytes: number;
  admit: (release: () => void) => void;
  refuse: () => void;
}

type Entry = { release: () => void } | { retryAfterSeconds: number };

/**
 * Permits and bytes, first come first served: the first waiter runs as soon as both are free, and
 * nobody behind it overtakes it (a large reservation is never starved by small ones).
 */
export class Admission {
  private readonly waiting: Waiter[] = [];
  private running = 0;
  private bytes = 0;
  /** How long an admitted operation held its place, smoothed: what a refused client is told to wait. */
  private holdMs = 1000;

  constructor(readonly settings: AdmissionSettings) {}

  /** What is held now: operations running and their reserved bytes, and how many wait. */
  get state(): { running: number; bytes: number; waiting: number } {
    return { running: this.running, bytes: this.bytes, waiting: this.waiting.length };
  }

  enter(estimate: number, signal?: AbortSignal): Promise<Entry> {
    const bytes = Math.min(Math.max(0, estimate), this.settings.maxBytes);
    if (this.waiting.length === 0 && this.fits(bytes)) return Promise.resolve({ release: this.take(bytes) });
    if (signal?.aborted) return Promise.resolve({ retryAfterSeconds: this.retryAfterSeconds() });
    return new Promise<Entry>((resolve) => {
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const at = this.waiting.indexOf(waiter);
        if (at < 0) return false;
        this.waiting.splice(at, 1);
        // The one that left may have been all that held the next ones back.
        this.pump();
        return true;
      };
      const waiter: Waiter = {
        bytes,
        admit: (release) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve({ release });
        },
        refuse: () => {
          if (leave()) resolve({ retryAfterSeconds: this.retryAfterSeconds() });
        },
      };
      const onAbort = () => waiter.refuse();
      const timer = setTimeout(waiter.refuse, this.settings.maxWaitMs);
      timer.unref?.();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private fits(bytes: number): boolean {
    return this.running < this.settings.permits && this.bytes + bytes <= this.settings.maxBytes;
  }

  private take(bytes: number): () => void {
    this.running++;
    this.bytes += bytes;
    const since = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.bytes -= bytes;
      this.holdMs = 0.8 * this.holdMs + 0.2 * (performance.now() - since);
      this.pump();
    };
  }

  private pump(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      next.admit(this.take(next.bytes));
    }
  }

  /** When the operations ahead of a newcomer would have finished, at the recent pace, in whole seconds. */
  private retryAfterSeconds(): number {
    const rounds = Math.ceil((this.waiting.length + 1) / this.settings.permits);
    return Math.max(1, Math.ceil((rounds * this.holdMs) / 1000));
  }
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value;
}

/**
 * The source, calling `release` once when it ends, fails or is closed. Not an async generator: a
 * generator closed before its first `next()` (a client that left at once) never runs its `finally`.
 */
function releasingAtEnd<T>(source: AsyncIterable<T>, release: () => void): AsyncIterableIterator<T> {
  const iterator = source[Symbol.asyncIterator]();
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      try {
        const step = await iterator.next();
        if (step.done) release();
        return step;
      } catch (error) {
        release();
        throw error;
      }
    },
    async return(value?: unknown) {
      release();
      return iterator.return ? iterator.return(value) : { done: true, value: value as T };
    },
    async throw(error?: unknown) {
      release();
      if (iterator.throw) return iterator.throw(error);
      throw error;
    },
  };
}

import { createHash } from 'node:crypto';
import { type DocumentNode, type ExecutionResult, GraphQLError, getOperationAST, print } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { ErrorCode } from '../error-codes.ts';
import type { RedisConnection } from '../redis/connection.ts';
import { type Claim, type Held, type KeptAnswer, RedisIdempotencyStore } from '../redis/idempotency-store.ts';
import { SecretBox } from '../webhooks/secret-box.ts';
import { defersOrStreams } from './incremental.ts';
import type { OperationRecords } from './operation-record.ts';
import { withoutCacheMetadata } from './response-cache/metadata.ts';

/**
 * Idempotent mutations (docs/clients.md, "Sending a mutation once"): a mutation sent with an
 * `Idempotency-Key` (the IETF httpapi draft "The Idempotency-Key HTTP Header Field", as Stripe and
 * Adyen read it), or with `extensions.idempotencyKey` (the only way on graphql-ws, whose operations
 * all carry the upgrade's headers, and per operation of a batch), runs once per licensee and key:
 *
 * - the first runs, and its answer, as its client received it, is kept for KEPT_MS (24 h) when its
 *   write may have taken effect: its `data` holds a root field, or it sent a request to the service
 *   (its outcome may then be unknown, and running it again could create a second record). A refusal
 *   made before anything was sent (a scope, the input, the budget, the bulkhead) is not kept: the
 *   key is free again and a retry runs;
 * - a repeat with the same key and the same operation (the document, its operation name and
 *   variables) gets that answer again without running, marked `extensions.idempotentReplay: true`
 *   (and, over HTTP, the response header `Idempotent-Replayed: true`);
 * - the same key with another operation or other variables is refused, BAD_USER_INPUT naming the
 *   header, HTTP 422, as the draft says;
 * - a repeat while the first still runs waits for its answer up to `waitMs`, then is refused with
 *   IDEMPOTENT_REQUEST_IN_PROGRESS, HTTP 409 and Retry-After (the draft's 409).
 *
 * Queries and subscriptions are idempotent already: a key sent with one is ignored, so a client
 * link may send one with every operation. Runs in `onExecute`, after every check of the document
 * (scopes, cost, trusted documents, credential expiry): a refused operation neither claims a key
 * nor reads an answer kept for it.
 */

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** How long an answer is kept: the draft's and Stripe's 24 hours. */
export const KEPT_MS = 24 * 60 * 60 * 1000;
/**
 * How long a key is held by an operation with no answer yet: longer than any mutation runs (each
 * upstream call is bounded by UPSTREAM_DEADLINE_MS and UPSTREAM_TIMEOUT_MS); a replica that died
 * mid-run holds its keys no longer than this, after which a repeat runs (the first one's outcome
 * unknown).
 */
export const RUNNING_MS = 2 * 60 * 1000;
/** Keys held in memory (without Redis, or while it is away), least recently used dropped first. */
const MEMORY_KEYS = 10_000;
/** The bytes of answers held in memory together. */
const MEMORY_BYTES = 64 * 1024 * 1024;

export type { Claim, Held, KeptAnswer };

/** Where keys and their answers are kept: this process (MemoryIdempotencyStore) or Redis for every replica. */
export interface IdempotencyStore {
  /** Takes `key` for an operation of this fingerprint, or says what holds it. */
  claim(key: string, fingerprint: string): Promise<Claim>;
}

type Entry = { running: true; fingerprint: string } | { running: false; kept: KeptAnswer };

/** Keys and answers in this process, bounded (MEMORY_KEYS, MEMORY_BYTES) and lapsing as in Redis. */
export class MemoryIdempotencyStore implements IdempotencyStore {
  private readonly entries: LRUCache<string, Entry>;

  constructor(private readonly times = { runningMs: RUNNING_MS, keptMs: KEPT_MS }) {
    this.entries = new LRUCache<string, Entry>({
      max: MEMORY_KEYS,
      maxSize: MEMORY_BYTES,
      sizeCalculation: (entry) => (entry.running ? 64 : 64 + entry.kept.answer.length),
      ttl: times.keptMs,
    });
  }

  async claim(key: string, fingerprint: string): Promise<Claim> {
    const found = this.entries.get(key);
    if (found?.running) return { running: { fingerprint: found.fingerprint } };
    if (found) return { kept: found.kept };
    const mark: Entry = { running: true, fingerprint };
    this.entries.set(key, mark, { ttl: this.times.runningMs });
    const ours = () => this.entries.get(key) === mark;
    return {
      held: {
        keep: async (answer) => {
          if (ours()) this.entries.set(key, { running: false, kept: answer }, { ttl: this.times.keptMs });
        },
        release: async () => {
          if (ours()) this.entries.delete(key);
        },
      },
    };
  }
}

/**
 * The gateway's store: in Redis when the gateway has it (every replica replays), this process's
 * memory standing in while Redis is away; else memory alone. With WEBHOOK_SECRET_KEY every answer
 * kept in Redis is sealed (an answer may hold a webhook endpoint's signing secret); without it they
 * are kept in clear there, as the endpoints' secrets themselves are.
 */
export function idempotencyStore(secretKeys: readonly string[], redis?: RedisConnection): IdempotencyStore {
  const memory = new MemoryIdempotencyStore();
  if (!redis) return memory;
  const box = secretKeys.length > 0 ? new SecretBox(secretKeys) : undefined;
  return new RedisIdempotencyStore(redis, memory, { runningMs: RUNNING_MS, keptMs: KEPT_MS }, box);
}

export interface IdempotencyOptions {
  /** How long a repeat waits for the first operation's answer before it is refused; default 15 s (UPSTREAM_DEADLINE_MS's default). */
  waitMs?: number;
}

type OperationContext = {
  request: Request;
  params?: { extensions?: Record<string, unknown> };
  principal?: { licenseeId: string };
};

/** Honours Idempotency-Key on mutations (see above); `records` says whether an operation sent anything upstream. */
export function useIdempotency(
  store: IdempotencyStore,
  records: OperationRecords,
  options: IdempotencyOptions = {},
): Plugin {
  const waitMs = options.waitMs ?? 15_000;
  /** Requests that came through HTTP: a socket's operations carry the upgrade's headers, not their own. */
  const overHttp = new WeakSet<Request>();
  const batches = new WeakSet<Request>();
  /** HTTP requests answered (in whole or in part) with a kept answer: their response is marked. */
  const replayed = new WeakSet<Request>();
  /** The operations (contexts) that hold a key, and its fingerprint. */
  const holding = new WeakMap<object, { held: Held; fingerprint: string }>();
  return {
    onRequest({ request }) {
      overHttp.add(request);
    },
    onRequestParse({ request }) {
      return {
        onRequestParseDone({ requestParserResult }) {
          if (Array.isArray(requestParserResult)) batches.add(request);
        },
      };
    },
    // Not async: a hook that returns a promise makes every operation wait a turn for it, queries included.
    onExecute(payload) {
      const { args } = payload;
      if (getOperationAST(args.document, args.operationName)?.operation !== 'mutation') return;
      return mutation(payload);
    },
    // Every door's result, once masked and marked (writeApplied) as its client receives it: what is kept.
    onExecutionResult({ request, context, result }) {
      const holder = holding.get(context);
      if (!holder) return;
      holding.delete(context);
      const answer = result && !(Symbol.asyncIterator in result) ? (result as ExecutionResult) : undefined;
      const sent = records.ofOperation(context, request).upstreamCalls > 0;
      if (answer && (sent || hasRootField(answer)))
        return holder.held.keep({
          fingerprint: holder.fingerprint,
          answer: JSON.stringify(withoutCacheMetadata(answer)),
        });
      return holder.held.release();
    },
    onResponse({ request, response }) {
      if (replayed.has(request)) response.headers.set('idempotent-replayed', 'true');
    },
  };

  async function mutation({ args, setResultAndStopExecution }: ExecutePayload): Promise<void> {
    const context = args.contextValue as OperationContext;
    const found = keyOf(context, overHttp.has(context.request), batches.has(context.request));
    if (found === undefined) return;
    if (found instanceof GraphQLError) return setResultAndStopExecution({ errors: [found] });
    const { key, field } = found;
    if (defersOrStreams(args.document))
      return setResultAndStopExecution({
        errors: [refusal(`${field} is not honoured on a mutation with @defer or @stream: send it without them`, field)],
      });
    const licensee = context.principal?.licenseeId ?? '';
    const stored = `${licensee}:${createHash('sha256').update(key).digest('base64url')}`;
    const fingerprint = fingerprintOf(args.document, args.operationName, args.variableValues);
    const signal = context.request.signal;
    const until = Date.now() + waitMs;
    for (let delay = 25; ; delay = Math.min(delay * 2, 250)) {
      const claim = await store.claim(stored, fingerprint);
      if ('held' in claim) {
        holding.set(context, { held: claim.held, fingerprint });
        return;
      }
      const held = 'kept' in claim ? claim.kept.fingerprint : claim.running.fingerprint;
      if (held !== fingerprint)
        return setResultAndStopExecution({
          errors: [
            refusal(
              `this ${field} was sent with another operation or other variables; a new operation needs a new key`,
              field,
              422,
            ),
          ],
        });
      if ('kept' in claim) {
        replayed.add(context.request);
        return setResultAndStopExecution(replay(claim.kept.answer));
      }
      if (Date.now() + delay > until || signal.aborted) {
        // It has run for waitMs already: its answer is likely near.
        const retryAfterSeconds = 1;
        return setResultAndStopExecution({
          errors: [
            new GraphQLError(
              `an operation with this ${field} is still running; retry after ${retryAfterSeconds} s to get its answer`,
              {
                extensions: {
                  code: ErrorCode.IDEMPOTENT_REQUEST_IN_PROGRESS,
                  field,
                  retryAfterSeconds,
                  http: { status: 409, headers: { 'retry-after': String(retryAfterSeconds) } },
                },
              },
            ),
          ],
        });
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

type ExecutePayload = Parameters<NonNullable<Plugin['onExecute']>>[0];

/**
 * The operation's key: the header (HTTP only, not in a batch) or `extensions.idempotencyKey`;
 * undefined without one; a refusal for one that is not a key, or two that differ.
 */
function keyOf(
  context: OperationContext,
  overHttp: boolean,
  inBatch: boolean,
): { key: string; field: string } | GraphQLError | undefined {
  const header = overHttp ? context.request.headers.get(IDEMPOTENCY_HEADER) : null;
  const extension = context.params?.extensions?.idempotencyKey;
  if (header !== null && inBatch)
    return refusal(
      `${IDEMPOTENCY_HEADER} names one operation: in a batch, send extensions.idempotencyKey with each mutation`,
      IDEMPOTENCY_HEADER,
    );
  const fromHeader = header === null ? undefined : parsedKey(header);
  if (header !== null && fromHeader === undefined) return malformed(IDEMPOTENCY_HEADER);
  const fromExtension =
    extension === undefined ? undefined : typeof extension === 'string' ? parsedKey(extension) : undefined;
  if (extension !== undefined && fromExtension === undefined) return malformed('extensions.idempotencyKey');
  if (fromHeader !== undefined && fromExtension !== undefined && fromHeader !== fromExtension)
    return refusal(
      `${IDEMPOTENCY_HEADER} and extensions.idempotencyKey differ: send the key once, or the same in both`,
      IDEMPOTENCY_HEADER,
    );
  if (fromHeader !== undefined) return { key: fromHeader, field: IDEMPOTENCY_HEADER };
  if (fromExtension !== undefined) return { key: fromExtension, field: 'extensions.idempotencyKey' };
  return undefined;
}

/** 1 to 255 printable ASCII characters (space to tilde). */
const KEY = /^[\x20-\x7e]{1,255}$/;
/** A Structured Field sf-string (RFC 9651 section 3.3.3): printable ASCII, `"` and `\` escaped. */
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

/** The key of a value as sent: bare (`7f3c…`) or the draft's sf-string (`"8e03978e-…"`); undefined if neither. */
export function parsedKey(value: string): string | undefined {
  const quoted = value.startsWith('"') ? SF_STRING.exec(value) : undefined;
  if (quoted === null) return undefined;
  const key = quoted ? quoted[1]!.replace(/\\(["\\])/g, '$1') : value;
  return KEY.test(key) ? key : undefined;
}

function malformed(field: string): GraphQLError {
  return refusal(
    `${field} must be 1 to 255 printable ASCII characters, bare or as a quoted string ("…"); nothing was run`,
    field,
  );
}

function refusal(message: string, field: string, status = 400): GraphQLError {
  return new GraphQLError(message, { extensions: { code: ErrorCode.BAD_USER_INPUT, field, http: { status } } });
}

/** Whether any root field of the answer holds a value: a write that took effect. */
function hasRootField(result: ExecutionResult): boolean {
  return Object.values(result.data ?? {}).some((value) => value !== null && value !== undefined);
}

/** The document as printed (so its layout does not matter), per parsed document (Yoga's parse cache). */
const printed = new WeakMap<DocumentNode, string>();

/** The operation a key was sent with: its document, operation name and variables, hashed. */
function fingerprintOf(document: DocumentNode, operationName: string | null | undefined, variables: unknown): string {
  let text = printed.get(document);
  if (text === undefined) printed.set(document, (text = print(document)));
  return createHash('sha256')
    .update(JSON.stringify([text, operationName ?? null, canonical(variables ?? {})]))
    .digest('base64url');
}

/** A JSON value with every object's members in order of name: the same variables in any order are the same. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((name) => [name, canonical((value as Record<string, unknown>)[name])]),
  );
}

/** A kept answer as its client received it, marked as a replay. */
function replay(kept: string): ExecutionResult {
  const answer = JSON.parse(kept) as {
    data?: Record<string, unknown> | null;
    errors?: {
      message: string;
      path?: (string | number)[];
      locations?: { line: number; column: number }[];
      extensions?: Record<string, unknown>;
    }[];
    extensions?: Record<string, unknown>;
  };
  const errors = answer.errors?.map((error) => {
    // Rebuilt as GraphQLErrors: Yoga reads an error's extensions.http (its status) from those only.
    const rebuilt = new GraphQLError(error.message, {
      ...(error.path ? { path: error.path } : {}),
      ...(error.extensions ? { extensions: error.extensions } : {}),
    });
    if (error.locations) Object.assign(rebuilt, { locations: error.locations });
    return rebuilt;
  });
  return {
    ...(answer.data !== undefined ? { data: answer.data } : {}),
    ...(errors ? { errors } : {}),
    extensions: { ...answer.extensions, idempotentReplay: true },
  };
}

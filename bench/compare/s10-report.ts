import { median } from '../lib.ts';
import type { FreshnessCounts } from './freshness.ts';
import type { Goal } from './report.ts';

/** S10's figures of one run, its report table (a column a run) and the goals it judges. */

/** What the users got of one kind of read. */
export interface KindCounts {
  operations: number;
  /** Answered with data, fresh or marked stale (`stale` of them). */
  ok: number;
  stale: number;
  rateLimited: number;
  /** Other errors, 5xx answers among them (`serverErrors`); a query with no answer at all is `noAnswer`. */
  errors: number;
  serverErrors: number;
  noAnswer: number;
}

export const noKindCounts = (): KindCounts => ({
  operations: 0,
  ok: 0,
  stale: 0,
  rateLimited: 0,
  errors: 0,
  serverErrors: 0,
  noAnswer: 0,
});

export interface LiveEventRun {
  seconds: number;
  users: number;
  /** The gateway's CHANGES_POLL_INTERVAL_MS (its default unless the run set one). */
  pollMs: number;
  /** Load average (1 min) when the run began and ended. */
  load: [number, number];
  pages: KindCounts;
  eventPages: KindCounts;
  hotelLists: KindCounts;
  writes: {
    sent: number;
    answered: number;
    refused: number;
    /** No answer (a failed connection, a 5xx, or none within 30 s of the run's end). */
    unanswered: number;
    /** Answered, yet never applied (no 2xx `postattendee` of its attendee in the emulator's log). */
    lost: number;
    refusals: Record<string, number>;
    p50Ms: number;
    p95Ms: number;
  };
  bookings: { created: number; changed: number; refused: number };
  /** Bookings the event's subscriber was told of, and the time from the booking to the tell. */
  told: { told: number; p50Ms: number; maxMs: number };
  subscribers: { accepted: number; of: number; ended: string[] };
  freshness: FreshnessCounts;
  /** Upstream calls the emulator logged during the run (429s apart), and the 429s. */
  calls: number;
  upstream429: number;
  busiestMinute: number;
  /** Of the calls, the feeds' polls (`getreservation` with `modifiedAfterDate`). */
  feedPolls: number;
  /** Operations answered with data (every kind) plus writes answered. */
  served: number;
  /** The users' reads, every kind. */
  p50Ms: number;
  p95Ms: number;
  /** Answers that were a 5xx or carried INTERNAL_SERVER_ERROR (up to 20), and queries with no answer. */
  serverErrors: string[];
  noAnswer: string[];
  /** The gateway's own warnings and errors during the run (its log at LOG_LEVEL warn), by message (tallyLogLine). */
  gatewayLog: Record<string, number>;
}

/**
 * Counts one line of the gateway's log (pino JSON) if it is a warning or worse, under its message
 * with the error code and reason it names: `change feed poll failed; … (RATE_LIMITED hopeless)`.
 */
export function tallyLogLine(line: string, into: Record<string, number>): void {
  if (!line.startsWith('{')) return;
  let entry: { level?: number; msg?: string; code?: string; why?: string };
  try {
    entry = JSON.parse(line) as typeof entry;
  } catch {
    return;
  }
  if ((entry.level ?? 0) < 40) return;
  const named = [entry.code, entry.why].filter(Boolean).join(' ');
  const key = `${entry.level! >= 50 ? 'error' : 'warning'}: ${entry.msg ?? '(no message)'}${named ? ` (${named})` : ''}`;
  into[key] = (into[key] ?? 0) + 1;
}

const pct = (part: number, whole: number) => (whole > 0 ? `${((part / whole) * 100).toFixed(1)} %` : '–');
const s = (ms: number) => (Number.isFinite(ms) ? (ms / 1000).toFixed(1) : '–');

/** Reservation-page reads answered with data (fresh or marked stale), as a share of them. */
export const pagesAnswered = (r: LiveEventRun) => (r.pages.operations > 0 ? r.pages.ok / r.pages.operations : 0);

function kindRow(k: KindCounts): string {
  return `${k.ok - k.stale} / ${k.stale} / ${k.rateLimited} / ${k.errors} (${k.serverErrors}) / ${k.noAnswer} of ${k.operations}`;
}

/** The S10 table: one column a run; the notes under it name the 5xx, failed queries and older answers. */
export function liveEventTable(runs: readonly LiveEventRun[]): string {
  if (runs.length === 0) return '';
  const rows: [string, (r: LiveEventRun) => string][] = [
    ['load average (1 min), start → end of the run', (r) => `${r.load[0].toFixed(2)} → ${r.load[1].toFixed(2)}`],
    [
      'users, seconds; subscribers accepted (one per event)',
      (r) =>
        `${r.users}, ${r.seconds}; ${r.subscribers.accepted} of ${r.subscribers.of}${r.subscribers.ended.length ? ` (ended: ${r.subscribers.ended.join('; ')})` : ''}`,
    ],
    [
      'reservation pages: fresh / marked stale / RATE_LIMITED / other errors (5xx) / no answer',
      (r) => kindRow(r.pages),
    ],
    ['reservation pages answered with data (fresh or marked stale)', (r) => pct(r.pages.ok, r.pages.operations)],
    ['event pages: fresh / marked stale / RATE_LIMITED / other errors (5xx) / no answer', (r) => kindRow(r.eventPages)],
    ['hotel lists: fresh / marked stale / RATE_LIMITED / other errors (5xx) / no answer', (r) => kindRow(r.hotelLists)],
    [
      'writes (`upsertAttendee`): answered / refused / unanswered; lost',
      (r) =>
        `${r.writes.answered} / ${r.writes.refused}${
          Object.keys(r.writes.refusals).length
            ? ` (${Object.entries(r.writes.refusals)
                .map(([code, n]) => `${n} ${code}`)
                .join(', ')})`
            : ''
        } / ${r.writes.unanswered} of ${r.writes.sent}; ${r.writes.lost}`,
    ],
    ['writes p50 / p95 ms', (r) => `${r.writes.p50Ms.toFixed(0)} / ${r.writes.p95Ms.toFixed(0)}`],
    [
      'bookings at the emulator: new / changed (refused)',
      (r) => `${r.bookings.created} / ${r.bookings.changed} (${r.bookings.refused})`,
    ],
    [
      'bookings told by the feeds; booking → tell p50 / max (s)',
      (r) => `${r.told.told} of ${r.bookings.created + r.bookings.changed}; ${s(r.told.p50Ms)} / ${s(r.told.maxMs)}`,
    ],
    [
      'freshness: page answers holding a change past due / older, unmarked / older, marked stale',
      (r) => `${r.freshness.checked} / **${r.freshness.olderUnmarked}** / ${r.freshness.olderMarked}`,
    ],
    [
      'older, unmarked: after the feed told the change / late by the poll interval only; most late (s past due)',
      (r) =>
        `${r.freshness.olderUnmarkedAfterTell} / ${r.freshness.olderUnmarked - r.freshness.olderUnmarkedAfterTell}; ${r.freshness.olderUnmarked ? s(r.freshness.maxLateMs) : '–'}`,
    ],
    [
      'upstream calls (feed polls) / served operations = calls per served operation',
      (r) => `${r.calls} (${r.feedPolls}) / ${r.served} = ${(r.calls / Math.max(1, r.served)).toFixed(4)}`,
    ],
    ['upstream 429s; busiest minute (of 240)', (r) => `${r.upstream429}; ${r.busiestMinute}`],
    ['reads p50 / p95 ms (every kind)', (r) => `${r.p50Ms.toFixed(0)} / ${r.p95Ms.toFixed(0)}`],
    [
      'answers that were a 5xx or INTERNAL_SERVER_ERROR / queries with no answer',
      (r) => `${r.serverErrors.length} / ${r.noAnswer.length}`,
    ],
    [
      "the gateway's warnings and errors during the run (its log)",
      (r) =>
        Object.entries(r.gatewayLog)
          .map(([what, n]) => `${n} × ${what}`)
          .join('; ') || 'none',
    ],
  ];
  const lines = [
    `| S10 | ${runs.map((_, i) => `run ${i + 1}`).join(' | ')} |`,
    `|---|${runs.map(() => '---|').join('')}`,
    ...rows.map(([label, cell]) => `| ${label} | ${runs.map((r) => cell(r).replace(/\|/g, '\\|')).join(' | ')} |`),
  ];
  const notes = runs.flatMap((r, i) => [
    ...r.freshness.examples.slice(0, 5).map((e) => `- run ${i + 1}, older unmarked: ${e}`),
    ...r.serverErrors.slice(0, 5).map((e) => `- run ${i + 1}, 5xx/INTERNAL_SERVER_ERROR: ${e}`),
    ...r.noAnswer.slice(0, 5).map((e) => `- run ${i + 1}, no answer: ${e}`),
  ]);
  return `${lines.join('\n')}${notes.length ? `\n\n${notes.join('\n')}` : ''}`;
}

/** Issue 37's goals on S10's runs: the share answered on the runs' median, the counts in every run. */
export function liveEventGoals(runs: readonly LiveEventRun[]): Goal[] {
  if (runs.length === 0) return [];
  const shares = runs.map(pagesAnswered);
  const share = median([...shares]);
  const stale = median(runs.map((r) => r.pages.stale / Math.max(1, r.pages.operations)));
  const each = (values: readonly (number | string)[]) => (values.length > 1 ? ` (runs: ${values.join(', ')})` : '');
  const older = runs.map((r) => r.freshness.olderUnmarked);
  const afterTell = runs.reduce((sum, r) => sum + r.freshness.olderUnmarkedAfterTell, 0);
  const refused = runs.map((r) => r.upstream429);
  const failed = runs.map((r) => r.serverErrors.length);
  return [
    {
      goal: 'S10: at least 95 % of reservation-page reads answered with data (fresh or marked stale)',
      measured: `${(share * 100).toFixed(1)} % (stale ${(stale * 100).toFixed(1)} %)${each(shares.map((x) => `${(x * 100).toFixed(1)} %`))}`,
      met: share >= 0.95,
    },
    {
      goal: "S10: no answer older than the feed's last poll unless marked stale",
      measured: `${older.reduce((a, b) => a + b, 0)}${each(older)}, ${afterTell} after the feed told the change`,
      met: older.every((n) => n === 0),
    },
    {
      goal: 'S10: no upstream 429',
      measured: `${Math.max(...refused)}${each(refused)}`,
      met: refused.every((n) => n === 0),
    },
    {
      goal: 'S10: never a 5xx',
      measured: `${Math.max(...failed)}${each(failed)}`,
      met: failed.every((n) => n === 0),
    },
  ];
}

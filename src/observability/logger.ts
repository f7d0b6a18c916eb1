import pino, { type DestinationStream, type Logger } from 'pino';
import { UpstreamError } from '../upstream/errors.ts';

/**
 * The gateway's logger. Credentials are removed and personal data (names, emails, phones,
 * addresses) is redacted wherever it appears in a logged object.
 */
const SECRET = ['key', 'token', 'authorization', 'UPSTREAM_KEY'];
const PERSONAL = [
  'firstName',
  'lastName',
  'email',
  'ccemail',
  'ccEmails',
  'phone',
  'address',
  'address2',
  'contact',
  'guests',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const paths = [...SECRET, ...PERSONAL].flatMap((f) => [f, `*.${f}`, `*.*.${f}`]);
  const options = { level, redact: { paths, censor: '[redacted]' }, base: undefined };
  return destination ? pino(options, destination) : pino(options);
}

type YogaLogLevel = 'debug' | 'info' | 'warn' | 'error';

/**
 * Yoga's log calls (`logger.error(error)`, `logger.debug('text', details)`) as pino log lines: an
 * error goes under `err`, where pino's serializer reads its type, message and stack, and text is
 * the message. (Passing Yoga's arguments on as one array logged an error under the key "0".)
 * Yoga logs at error every error the masking rewrote, which includes the gateway's coded answers
 * to a client's mistakes; their messages may quote the client's values ("not event 5002"), and at
 * info and above no line may hold one: those go to debug. The audit line has their codes.
 */
export function yogaLogging(logger: Logger): Record<YogaLogLevel, (...args: unknown[]) => void> {
  const forward =
    (level: YogaLogLevel) =>
    (...args: unknown[]): void => {
      const err = args.find((arg) => arg instanceof Error);
      const target = err && isAnswerToClient(err) ? 'debug' : level;
      // Yoga logs a few debug lines per request: at the usual levels they cost nothing past this check.
      if (!logger.isLevelEnabled(target)) return;
      const text = args.filter((arg) => typeof arg === 'string').join(' ');
      const details = args.filter((arg) => arg !== err && typeof arg !== 'string');
      logger[target](
        { ...(err ? { err } : {}), ...(details.length > 0 ? { details } : {}) },
        text || (err as Error | undefined)?.message || '',
      );
    };
  return { debug: forward('debug'), info: forward('info'), warn: forward('warn'), error: forward('error') };
}

/** A coded error the client was answered with (BAD_USER_INPUT, NOT_FOUND, RATE_LIMITED …), not a fault of the gateway. */
function isAnswerToClient(error: Error): boolean {
  const original = (error as { originalError?: unknown }).originalError ?? error;
  return original instanceof UpstreamError;
}

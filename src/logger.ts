import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * The gateway's logger. Credentials are removed and personal data (names, emails, phones,
 * addresses) is redacted wherever it appears in a logged object.
 */
const SECRET = ['key', 'token', 'authorization', 'UPSTREAM_KEY'];
const PERSONAL = ['firstName', 'lastName', 'email', 'ccemail', 'ccEmails', 'phone', 'address', 'address2', 'contact', 'guests'];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const paths = [...SECRET, ...PERSONAL].flatMap((f) => [f, `*.${f}`, `*.*.${f}`]);
  const options = { level, redact: { paths, censor: '[redacted]' }, base: undefined };
  return destination ? pino(options, destination) : pino(options);
}

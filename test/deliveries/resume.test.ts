import { describe, expect, it } from 'vitest';
import { ChangeCursor, resumeFrom } from '../../src/deliveries/resume.ts';

const CURSOR = '2025-03-01T10:15:00.000Z';

describe('resuming a callback subscription from its cursor', () => {
  it('gives the cursor to the variable `since` names, leaving the document as it was', () => {
    const params = {
      query:
        'subscription S($eventId: Int!, $since: DateTime) { reservationChanged(eventId: $eventId, since: $since) { kind } }',
      variables: { eventId: 5003, since: '2025-01-01T00:00:00Z' },
      operationName: 'S',
    };
    expect(resumeFrom(params, CURSOR)).toMatchObject({
      variables: { eventId: 5003, since: CURSOR },
      operationName: 'S',
    });
    expect(resumeFrom(params, CURSOR).query).toContain('since: $since');
    expect(params.variables.since).toBe('2025-01-01T00:00:00Z');
  });

  it('writes `since` into a document that had none, or replaces the one written there, under an alias too', () => {
    const absent = resumeFrom(
      { query: 'subscription { changes: reservationChanged(eventId: 5003) { kind } }' },
      CURSOR,
    );
    expect(absent.query).toContain(`changes: reservationChanged(eventId: 5003, since: "${CURSOR}")`);
    const written = resumeFrom(
      { query: 'subscription { reservationChanged(since: "2025-01-01T00:00:00Z", eventId: 5003) { kind } }' },
      CURSOR,
    );
    expect(written.query).toContain(`reservationChanged(eventId: 5003, since: "${CURSOR}")`);
    expect(written.query).not.toContain('2025-01-01');
  });

  it('leaves the request as it was without a cursor, a document, or with one that does not parse', () => {
    const params = { query: 'subscription { reservationChanged(eventId: 1) { kind } }' };
    expect(resumeFrom(params, undefined)).toBe(params);
    const persisted = { extensions: { persistedQuery: { version: 1, sha256Hash: 'abc' } } };
    expect(resumeFrom(persisted, CURSOR)).toBe(persisted);
    const broken = { query: 'subscription {' };
    expect(resumeFrom(broken, CURSOR)).toBe(broken);
  });

  it('keeps the latest instant told: an older modifiedAt does not move it back', () => {
    const cursor = new ChangeCursor();
    expect(cursor.position).toBeUndefined();
    cursor.at('2025-03-01T10:00:00Z');
    cursor.at('2025-03-01T10:05:00Z');
    cursor.at('2025-03-01T09:00:00Z');
    expect(cursor.position).toBe('2025-03-01T10:05:00Z');
  });
});

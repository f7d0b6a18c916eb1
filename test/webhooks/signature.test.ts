import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ReservationChange } from '../../src/changes/change.ts';
import { decodeLicenseeGlobalId } from '../../src/ids/global-id.ts';
import type { ReservationModel } from '../../src/upstream/records.ts';
import { messageId, reservationMessage, testMessage } from '../../src/webhooks/message.ts';
import { newSecret, sign, signedHeaders } from '../../src/webhooks/signature.ts';
import { verifies } from './standard-webhooks.ts';

/*
 * The delivery format of the Standard Webhooks specification, and the message a change becomes.
 */

// The reference vector of the specification's libraries (standardwebhooks' `sign function works`).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('Standard Webhooks signing', () => {
  it('signs the specification’s reference vector', () => {
    expect(sign(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });

  it('makes whsec_ secrets of 32 random bytes, a different one each time', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(newSecret()).not.toBe(secret);
  });

  it('signs id.timestamp.body with HMAC-SHA256 under the decoded key, as a receiver computes it', () => {
    const secret = newSecret();
    const headers = signedHeaders([secret], 'msg_1', 1_800_000_000, '{"a":1}');
    const expected = createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
      .update('msg_1.1800000000.{"a":1}')
      .digest('base64');
    expect(headers).toEqual({
      'webhook-id': 'msg_1',
      'webhook-timestamp': '1800000000',
      'webhook-signature': `v1,${expected}`,
    });
  });

  afterEach(() => {
    vi.useRealTimers();
  });
  /** Verify as a receiver would at `seconds` since the epoch. */
  const at = (seconds: number) => vi.useFakeTimers({ now: seconds * 1_000, toFake: ['Date'] });

  it('signs with both secrets while one rotates, and either verifies', () => {
    at(1_800_000_000);
    const [current, previous] = [newSecret(), newSecret()];
    const headers = signedHeaders([current, previous], 'msg_2', 1_800_000_000, 'body');
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifies(current, headers, 'body')).toBe(true);
    expect(verifies(previous, headers, 'body')).toBe(true);
    expect(verifies(newSecret(), headers, 'body')).toBe(false);
  });

  it('refuses a changed body, another id, or a timestamp out of tolerance', () => {
    const secret = newSecret();
    const headers = signedHeaders([secret], 'msg_3', 1_800_000_000, 'body');
    at(1_800_000_000);
    expect(verifies(secret, headers, 'body ')).toBe(false);
    expect(verifies(secret, { ...headers, 'webhook-id': 'msg_4' }, 'body')).toBe(false);
    at(1_800_000_301);
    expect(verifies(secret, headers, 'body')).toBe(false);
    at(1_800_000_299);
    expect(verifies(secret, headers, 'body')).toBe(true);
  });
});

describe('the message of a change', () => {
  const reservation = {
    eventId: 5003,
    reservationNumber: 700001,
    status: 'accepted',
    modifiedDate: '2027-01-15T12:01:00+00:00',
    firstName: 'Ada',
    lastName: 'Lovelace',
    email: 'ada@example.com',
    phone: '+44 20 7946 0000',
  } as unknown as ReservationModel;
  const change: ReservationChange = {
    kind: 'CHANGED',
    modifiedAt: '2027-01-15T12:01:00+00:00',
    reservation,
    key: '700001:abc',
  };

  it('carries the change’s identity and order, and no personal data', () => {
    const message = reservationMessage('1001', change, 3, new Date('2027-01-15T12:01:30Z'));
    expect(message).toEqual({
      type: 'reservation.changed',
      timestamp: '2027-01-15T12:01:30.000Z',
      data: {
        eventId: 5003,
        reservationNumber: 700001,
        id: expect.any(String),
        status: 'ACCEPTED',
        modifiedAt: '2027-01-15T12:01:00+00:00',
        sequence: 3,
      },
    });
    const text = JSON.stringify(message);
    for (const personal of ['Ada', 'Lovelace', 'ada@example.com', '7946']) expect(text).not.toContain(personal);
  });

  it('names the reservation by the Relay id the graph gives its licensee', () => {
    const { data } = reservationMessage('1001', change, 1, new Date());
    expect(decodeLicenseeGlobalId((data as { id: string }).id, '1001')).toEqual({
      typename: 'Reservation',
      id: '5003:700001',
    });
    expect(decodeLicenseeGlobalId((data as { id: string }).id, '1002').typename).toBe('');
  });

  it('types each kind, and an unknown status as null', () => {
    const at = new Date();
    expect(reservationMessage('1', { ...change, kind: 'CREATED' }, 1, at).type).toBe('reservation.created');
    expect(reservationMessage('1', { ...change, kind: 'CANCELLED' }, 1, at).type).toBe('reservation.cancelled');
    const odd = { ...change, reservation: { ...reservation, status: 'archived' } as unknown as ReservationModel };
    expect((reservationMessage('1', odd, 1, at).data as { status: unknown }).status).toBeNull();
    expect(testMessage('ep_1', at)).toEqual({
      type: 'webhook.test',
      timestamp: at.toISOString(),
      data: { endpointId: 'ep_1' },
    });
  });

  it('has one webhook-id per change and endpoint, the same however often it is made', () => {
    expect(messageId('ep_1', '700001:abc')).toBe(messageId('ep_1', '700001:abc'));
    expect(messageId('ep_1', '700001:abc')).toMatch(/^msg_[A-Za-z0-9_-]{27}$/);
    expect(messageId('ep_2', '700001:abc')).not.toBe(messageId('ep_1', '700001:abc'));
    expect(messageId('ep_1', '700001:abd')).not.toBe(messageId('ep_1', '700001:abc'));
  });
});
